//! "Approve always": the chooser of rules that fit the call on screen, and
//! the Rules view of the session's always-rules, where one can be revoked.

use std::sync::PoisonError;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget, Wrap};

use crate::sanitize::escape;
use crate::tui::app::{AlwaysRule, App};
use crate::tui::keys::Action;

/// Draws `lines` in a bordered box centred in `area`, as tall as its lines
/// are once wrapped at the box's own inner width (so the last line, the
/// keys, is never cut off by a miscount).
fn modal(lines: Vec<Line<'static>>, title: String, area: Rect, buf: &mut Buffer) {
    let width = area.width.saturating_sub(4).min(100);
    let paragraph = Paragraph::new(lines).wrap(Wrap { trim: false });
    let rows = paragraph.line_count(width.saturating_sub(2).max(1));
    let height = u16::try_from(rows.saturating_add(2))
        .unwrap_or(u16::MAX)
        .min(area.height.saturating_sub(2));
    let modal = super::centered(area, width, height);
    Clear.render(modal, buf);
    paragraph
        .block(
            Block::bordered()
                .title(title)
                .border_style(Style::default().fg(Color::Cyan)),
        )
        .render(modal, buf);
}

fn rule_lines(rules: &[AlwaysRule], selected: usize) -> Vec<Line<'static>> {
    rules
        .iter()
        .enumerate()
        .map(|(i, rule)| {
            let style = if i == selected {
                Style::default().fg(Color::Black).bg(Color::Cyan)
            } else {
                Style::default()
            };
            Line::styled(
                format!(
                    "{} {}. {}",
                    if i == selected { "›" } else { " " },
                    i + 1,
                    escape(&rule.describe())
                ),
                style,
            )
        })
        .collect()
}

/// The rules that fit the call, narrowest first; the exact rule is what is shown.
/// A rule that needs a second key shows its warning, and once its key was
/// pressed (`confirming`), which key adds it.
pub fn chooser(
    app: &App,
    choices: &[AlwaysRule],
    (selected, confirming): (usize, Option<Action>),
    area: Rect,
    buf: &mut Buffer,
) {
    let mut lines = vec![Line::styled(
        "Approve always: which rule? (narrowest first; it lasts until this console exits)",
        Style::default().add_modifier(Modifier::BOLD),
    )];
    lines.extend(rule_lines(choices, selected));
    lines.push(Line::raw(""));
    if let Some(warning) = choices.get(selected).and_then(|rule| app.always_warning(rule)) {
        let warn = Style::default().fg(Color::Yellow).add_modifier(Modifier::BOLD);
        lines.push(Line::styled(escape(&warning), warn));
        let again = match confirming {
            Some(Action::KeepRule) => "press s again to add it and keep it in the policy file",
            Some(_) => "press Enter again to add it for this session",
            None => "it needs a second press of Enter (or s) to be added",
        };
        lines.push(Line::styled(format!("{again} · ↑/↓ chooses a narrower rule"), warn));
        lines.push(Line::raw(""));
    }
    let kept = choices.get(selected).map(AlwaysRule::kept_scope).unwrap_or_default();
    let keep = match (&app.keep_into, &app.keep_refused) {
        (Some(file), _) => format!(
            " · s also writes it into {} (a rule with a generated id, {})",
            escape(file),
            escape(&kept)
        ),
        (None, Some(why)) => format!(" ({})", escape(why)),
        (None, None) => " (no policy file to keep it in)".to_owned(),
    };
    lines.push(Line::styled(
        format!("Enter adds it for this session{keep} · Esc back"),
        Style::default().fg(Color::DarkGray),
    ));
    modal(lines, " Approve always ".to_owned(), area, buf);
}

/// The session's always-rules.
pub fn list(app: &App, selected: usize, area: Rect, buf: &mut Buffer) {
    let rules = app.always.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let mut lines = if rules.is_empty() {
        vec![Line::styled(
            "No always-rules yet: press a at an approval prompt.",
            Style::default().fg(Color::DarkGray),
        )]
    } else {
        rule_lines(&rules, selected)
    };
    lines.push(Line::raw(""));
    lines.push(Line::from(vec![Span::styled(
        "d revokes the selected rule for this session (a rule kept in the policy file stays there) · Esc closes",
        Style::default().fg(Color::DarkGray),
    )]));
    let title = format!(" Always-rules ({}) ", rules.len());
    modal(lines, title, area, buf);
}
