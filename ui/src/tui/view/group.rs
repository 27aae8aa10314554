//! Answering at once: the list of an agent session's (or a batch's) waiting calls that
//! `Enter` answers, exactly as fixed when `Y` (or `N` and its reason) was
//! pressed; a call no longer waiting is marked and will not be answered.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget, Wrap};

use crate::sanitize::escape;
use crate::tui::app::{App, Group, GroupVerdict, plural};

pub fn render(app: &App, group: &Group, area: Rect, buf: &mut Buffer) {
    let waiting: Vec<u64> = group
        .ids
        .iter()
        .copied()
        .filter(|id| app.prompts.get(*id).is_some())
        .collect();
    let (verb, color) = match &group.verdict {
        GroupVerdict::Approve => ("Approve", Color::Green),
        GroupVerdict::Reject { .. } => ("Reject", Color::Red),
    };
    let width = area.width.saturating_sub(4).min(100);
    let inner = width.saturating_sub(2) as usize;
    let mut lines = vec![Line::styled(
        format!(
            "{verb} {} {} at once:",
            plural(group.ids.len(), "waiting call"),
            group.of.words()
        ),
        Style::default().add_modifier(Modifier::BOLD),
    )];
    let room = (area.height.saturating_sub(2) as usize).saturating_sub(8).max(1);
    for (i, id) in group.ids.iter().enumerate().take(room) {
        lines.push(match app.prompts.get(*id) {
            Some(prompt) => {
                let mut text = format!("{:>3}. {} ({})", i + 1, escape(&prompt.tool), escape(&prompt.call_id));
                if let Some(subagent) = &prompt.subagent {
                    text.push_str(&format!(" · {}", escape(&subagent.label())));
                }
                let arguments = crate::sanitize::argument_lines(&prompt.arguments)
                    .iter()
                    .map(|l| l.trim().to_owned())
                    .collect::<Vec<_>>()
                    .join(" ");
                text.push_str("  ");
                let left = inner.saturating_sub(text.chars().count());
                Line::from(vec![
                    Span::raw(text),
                    Span::styled(super::text::fit(&arguments, left), Style::default().fg(Color::DarkGray)),
                ])
            }
            None => Line::styled(
                format!("{:>3}. no longer waiting: not answered again", i + 1),
                Style::default().fg(Color::DarkGray),
            ),
        });
    }
    if group.ids.len() > room {
        lines.push(Line::raw(format!("     … and {} more", group.ids.len() - room)));
    }
    if let GroupVerdict::Reject { reason } = &group.verdict {
        let reason = reason.as_deref().unwrap_or("(none given)");
        for (i, line) in crate::sanitize::escaped_lines(reason).enumerate() {
            let label = if i == 0 { "Reason    " } else { "          " };
            lines.push(Line::from(vec![
                Span::styled(label, Style::default().fg(Color::DarkGray)),
                Span::raw(line),
            ]));
        }
    }
    lines.push(Line::raw(""));
    lines.push(Line::from(vec![
        Span::styled(
            format!(" Enter {} these {} ", verb.to_lowercase(), waiting.len()),
            Style::default().fg(Color::Black).bg(color),
        ),
        Span::raw("  "),
        Span::styled(" Esc ", Style::default().fg(Color::Black).bg(Color::Gray)),
        Span::raw(" back to the prompt"),
    ]));
    lines.push(Line::styled(
        "Calls that start waiting after this list was shown are not included.",
        Style::default().fg(Color::DarkGray),
    ));
    let rows: usize = lines.iter().map(|l| l.width().div_ceil(inner.max(1)).max(1)).sum();
    let height = (rows as u16 + 2).min(area.height.saturating_sub(2));
    let modal = super::centered(area, width, height);
    Clear.render(modal, buf);
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .block(
            Block::bordered()
                .title(format!(" {verb} them all "))
                .border_style(Style::default().fg(color)),
        )
        .render(modal, buf);
}
