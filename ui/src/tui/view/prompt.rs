//! The approval prompt: a modal over everything while a call waits for a
//! human. Long arguments are clipped with a visible marker and open in a
//! full view; every field a model or agent wrote is escaped.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph, Widget, Wrap};

use super::{pretty_arguments, text};
use crate::tui::app::{AlwaysRule, App, ApprovalPrompt, FullView, Overlay};

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let Some(prompt) = app.prompts.current() else { return };
    if let Overlay::FullArguments(view) = &app.overlay {
        full_arguments(prompt, view, area, buf);
        return;
    }
    let width = area.width.saturating_sub(4).min(100);
    let inner_width = width.saturating_sub(2).max(1) as usize;
    let max_height = area.height.saturating_sub(2);
    let reason_height: u16 = if matches!(app.overlay, Overlay::Reason(_)) {
        6
    } else {
        0
    };

    let mut head = vec![
        field_pair("Tool", &prompt.tool, "Call", &prompt.call_id),
        text::field("Scope", &prompt.scope_label),
        field_pair(
            "Owner",
            prompt.owner.as_deref().unwrap_or("—"),
            "Agent",
            prompt.agent.as_deref().unwrap_or("—"),
        ),
        text::field("Reason", prompt.reason.as_deref().unwrap_or("(none given)")),
    ];
    head.push(match &prompt.validation {
        Ok(()) => Line::styled(
            "✓ arguments validate against the tool's schema",
            Style::default().fg(Color::Green),
        ),
        Err(problem) => Line::styled(
            format!("✗ {}", crate::sanitize::escape(problem)),
            Style::default().fg(Color::Red),
        ),
    });
    if let Some(veto) = &prompt.guard_veto {
        head.push(Line::styled(
            format!(
                "⛔ approving will not run it: {} will veto it",
                crate::sanitize::escape(veto)
            ),
            Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
        ));
    }
    let any_escaped = [&prompt.tool, &prompt.call_id, &prompt.scope_label, &prompt.arguments]
        .iter()
        .any(|t| crate::sanitize::needs_warning(t))
        || prompt.reason.as_deref().is_some_and(crate::sanitize::needs_warning);
    let mut args_head = vec![Span::styled("Arguments", Style::default().add_modifier(Modifier::BOLD))];
    if any_escaped {
        args_head.push(Span::raw(" "));
        args_head.push(text::badge());
        args_head.push(Span::styled(
            " control, bidi or zero-width characters are shown as \\u{..}",
            Style::default().fg(Color::Yellow),
        ));
    }
    head.push(Line::from(args_head));
    let mut tail = vec![queue_line(app), Line::raw("")];
    tail.extend(options(prompt));

    // The keys and the exact always-rule sit in a fixed area at the bottom,
    // so nothing above can push them out; the arguments get what is left,
    // one screen row per line, and say what they leave out.
    let head_height = wrapped_height(&head, inner_width);
    let tail_height = wrapped_height(&tail, inner_width);
    let fixed = head_height + tail_height + reason_height as usize;
    let room = (max_height as usize).saturating_sub(fixed + 2).max(1);
    let argument_lines = pretty_arguments(&prompt.arguments);
    let args: Vec<Line> = clip_block(&argument_lines, room, inner_width.saturating_sub(2))
        .into_iter()
        .map(|line| {
            let style = if line.starts_with("[… ") {
                Style::default().fg(Color::Yellow)
            } else {
                Style::default()
            };
            Line::styled(format!("  {line}"), style)
        })
        .collect();
    let height = ((fixed + args.len() + 2) as u16).min(max_height);
    let modal = Rect {
        x: area.x + (area.width.saturating_sub(width)) / 2,
        y: area.y + (area.height.saturating_sub(height)) / 2,
        width,
        height,
    };
    Clear.render(modal, buf);

    let left = prompt.deadline.saturating_duration_since(app.now);
    let countdown = format!(" {}:{:02} left ", left.as_secs() / 60, left.as_secs() % 60);
    let countdown_style = if left.as_secs() < 15 {
        Style::default()
            .fg(Color::White)
            .bg(Color::Red)
            .add_modifier(Modifier::BOLD)
    } else {
        Style::default().fg(Color::Black).bg(Color::Yellow)
    };
    let border = if app.prompt_is_new() {
        Color::Cyan
    } else {
        Color::Yellow
    };
    let block = Block::bordered()
        .border_type(BorderType::Double)
        .border_style(Style::default().fg(border))
        .title(Line::styled(
            format!(" Approval 1 of {} ", app.prompts.len()),
            Style::default().add_modifier(Modifier::BOLD),
        ))
        .title(if app.prompt_is_new() {
            // Answer keys wait until the highlight is gone (`ANSWER_GUARD`).
            Line::styled(
                " ◆ new request ",
                Style::default()
                    .fg(Color::Black)
                    .bg(Color::Cyan)
                    .add_modifier(Modifier::BOLD),
            )
        } else {
            Line::raw("")
        })
        .title(Line::styled(countdown, countdown_style).right_aligned());
    let inner = block.inner(modal);
    block.render(modal, buf);

    let mut lines = head;
    lines.extend(args);
    let [body, keys_area, reason_area] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(tail_height as u16),
        Constraint::Length(reason_height),
    ])
    .areas(inner);
    Paragraph::new(lines).wrap(Wrap { trim: false }).render(body, buf);
    Paragraph::new(tail).wrap(Wrap { trim: false }).render(keys_area, buf);
    if let Overlay::Reason(textarea) = &app.overlay {
        let block = Block::bordered()
            .title(" Reason for the model (Ctrl+S sends, Esc goes back) ")
            .border_style(Style::default().fg(Color::Cyan));
        let inside = block.inner(reason_area);
        block.render(reason_area, buf);
        textarea.render(inside, buf);
    }
}

/// Rows the lines take when word-wrapped at `width` columns: a wrapped line
/// is counted one row generously, since words do not split evenly.
fn wrapped_height(lines: &[Line<'_>], width: usize) -> usize {
    lines
        .iter()
        .map(|l| match l.width() {
            w if w <= width => 1,
            w => w.div_ceil(width) + 1,
        })
        .sum()
}

fn field_pair<'a>(l1: &'a str, v1: &str, l2: &'a str, v2: &str) -> Line<'a> {
    let mut first = text::field(l1, v1);
    let second = text::field(l2, v2);
    first.spans.push(Span::raw("   "));
    first.spans.extend(second.spans);
    first
}

fn queue_line(app: &App) -> Line<'static> {
    let waiting: Vec<String> = app
        .prompts
        .iter()
        .skip(1)
        .take(4)
        .map(|p| {
            format!(
                "{} ({})",
                crate::sanitize::escape(&p.tool),
                crate::sanitize::escape(p.agent.as_deref().unwrap_or(&p.scope_label))
            )
        })
        .collect();
    if waiting.is_empty() {
        return Line::styled("No other request is waiting.", Style::default().fg(Color::DarkGray));
    }
    let more = app.prompts.len().saturating_sub(1 + waiting.len());
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    Line::styled(
        format!("Waiting next: {}{tail}", waiting.join(", ")),
        Style::default().fg(Color::Yellow),
    )
}

fn options(prompt: &ApprovalPrompt) -> Vec<Line<'static>> {
    let key = |k: &str| Span::styled(format!(" {k} "), Style::default().fg(Color::Black).bg(Color::Gray));
    vec![
        Line::from(vec![
            key("y"),
            Span::raw(" approve once   "),
            key("n"),
            Span::raw(" reject with a reason   "),
            key("Esc"),
            Span::raw(" reject   "),
            key("v"),
            Span::raw(" view all"),
        ]),
        Line::from(vec![
            key("a"),
            Span::raw(" approve always: "),
            Span::styled(
                match AlwaysRule::choices_for(prompt).first() {
                    Some(narrowest) => crate::sanitize::escape(&narrowest.describe()),
                    None => String::new(),
                },
                Style::default().fg(Color::Cyan),
            ),
            Span::raw(" (or a wider rule)"),
        ]),
    ]
}

/// At most `rows` lines, each cut to `width` columns; what is left out (lines
/// below, or the ends of long lines) is named on the last line with the key
/// that shows it, so nothing is ever silently cut.
fn clip_block(lines: &[String], rows: usize, width: usize) -> Vec<String> {
    let rows = rows.max(1);
    let fit = |line: &String| text::fit(line, width.max(2));
    let cut = lines.iter().any(|l| l.chars().count() > width.max(2));
    if lines.len() <= rows && !(cut && lines.len() == rows) {
        let mut shown: Vec<String> = lines.iter().map(fit).collect();
        if cut {
            shown.push("[… long lines cut at the edge] v view all".to_owned());
        }
        return shown;
    }
    let keep = rows - 1;
    let mut shown: Vec<String> = lines[..keep].iter().map(fit).collect();
    shown.push(format!("[… {} more lines] v view all", lines.len() - keep));
    shown
}

fn full_arguments(prompt: &ApprovalPrompt, view: &FullView, area: Rect, buf: &mut Buffer) {
    let modal = Rect {
        x: area.x + 1,
        y: area.y + 1,
        width: area.width.saturating_sub(2),
        height: area.height.saturating_sub(2),
    };
    let lines = pretty_arguments(&prompt.arguments);
    let total = lines.len();
    let width = modal.width.saturating_sub(2).max(1) as usize;
    let visible = modal.height.saturating_sub(2) as usize;
    let first = (view.scroll as usize).min(total.saturating_sub(1));
    let query = view.query.as_ref().map(|(q, _)| q.to_lowercase());
    let mut rows: Vec<Line> = Vec::with_capacity(visible);
    let mut last = first;
    for (i, line) in lines.iter().enumerate().skip(first) {
        if rows.len() >= visible {
            break;
        }
        last = i;
        let hit = query.as_deref().is_some_and(|q| line.to_lowercase().contains(q));
        let style = if hit {
            Style::default().fg(Color::Black).bg(Color::Yellow)
        } else {
            Style::default()
        };
        if view.wrap {
            let chars: Vec<char> = line.chars().collect();
            for chunk in chars.chunks(width).take(visible - rows.len()) {
                rows.push(Line::styled(chunk.iter().collect::<String>(), style));
            }
            if chars.is_empty() {
                rows.push(Line::raw(""));
            }
        } else {
            let shown: String = line.chars().skip(view.hscroll as usize).take(width).collect();
            rows.push(Line::styled(shown, style));
        }
    }
    let mut title = format!(
        " All arguments of {} ({}): lines {}-{} of {} · {} · Esc back ",
        crate::sanitize::escape(&prompt.call_id),
        crate::sanitize::escape(&prompt.tool),
        (first + 1).min(total),
        (last + 1).min(total),
        total,
        if view.wrap {
            "wrapped (w)".to_owned()
        } else {
            format!("column {} (w wraps, ←→)", view.hscroll + 1)
        }
    );
    if let Some(typing) = &view.typing {
        title = format!(" /{}▏ (Enter finds, Esc cancels) ", crate::sanitize::escape(typing));
    } else if let Some((query, false)) = &view.query {
        title.push_str(&format!("· \"{}\" not found ", crate::sanitize::escape(query)));
    }
    Clear.render(modal, buf);
    Paragraph::new(rows)
        .block(
            Block::bordered()
                .title(title)
                .border_style(Style::default().fg(Color::Yellow)),
        )
        .render(modal, buf);
}
