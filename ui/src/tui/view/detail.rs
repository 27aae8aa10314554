//! The selected call: decision trail, arguments, and the outcome as the
//! model will see it.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::{is_focused, pane_block, text};
use crate::tui::app::{App, Pane};

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let focused = is_focused(app, Pane::Detail);
    let (Some(batch), Some(row)) = (app.current_batch(), app.selected_row()) else {
        Paragraph::new(Line::styled(
            "select a call to see its detail",
            Style::default().fg(Color::DarkGray),
        ))
        .block(pane_block(Line::from(" Detail "), focused))
        .render(area, buf);
        return;
    };
    let heading = Style::default().add_modifier(Modifier::BOLD);
    let (call_id, _) = text::escaped(&row.call.call_id);
    let (name, _) = text::escaped(&row.call.name);
    let escaped = [&row.call.call_id, &row.call.name]
        .iter()
        .any(|t| crate::sanitize::needs_warning(t));
    let title = format!(
        " {call_id} · {name} · {} {}",
        row.mode.as_str(),
        if escaped { "⚠ escaped " } else { "" }
    );
    let mut lines = Vec::new();
    // Where the call runs is half of the question: `rm -rf build` in which
    // directory. Only front doors that know it say it.
    let cwd = row.call.invocation_context.as_ref().and_then(|c| c["cwd"].as_str());
    if let Some(cwd) = cwd {
        lines.push(text::field("In", &text::home_relative(cwd)));
    }
    if let Some(subagent) = crate::subagent::Subagent::of_context(row.call.invocation_context.as_ref()) {
        lines.push(text::field("Via", &subagent_text(&subagent)));
    }
    lines.push(Line::styled("Decision trail", heading));
    let trail = app.trail_of(batch, &row);
    if trail.is_empty() && row.outcome.is_none() {
        lines.push(Line::raw(format!("  {}", row.stage.label())));
    }
    for entry in trail.iter() {
        // A reason typed over several lines keeps them, indented under its entry.
        for (i, line) in crate::sanitize::escaped_lines(&entry.describe()).enumerate() {
            let indent = if i == 0 { "  " } else { "    " };
            lines.push(Line::raw(format!("{indent}{line}")));
        }
    }
    if let Some(decided) = app.decided_by(batch, &row) {
        lines.push(Line::from(vec![
            Span::raw("  decided by "),
            Span::styled(decided, Style::default().fg(Color::Cyan)),
        ]));
    }
    lines.push(Line::styled("Arguments", heading));
    let arguments = crate::sanitize::marked_argument_lines(&row.call.arguments);
    if crate::sanitize::arguments_need_warning(&arguments) {
        lines.push(Line::from(vec![
            Span::raw("  "),
            text::badge(),
            Span::raw(" control or invisible characters shown as \\u{..}"),
        ]));
    }
    lines.extend(arguments.into_iter().map(|l| Line::raw(format!("  {}", l.text))));
    // Approved with edits: the arguments that ran follow the model's.
    if let Some((to, by)) = trail.iter().find_map(|e| match e {
        crate::session::provenance::TrailEntry::Edited { to, by, .. } => Some((to, by)),
        _ => None,
    }) {
        let by = crate::session::provenance::answered_at(by);
        lines.push(Line::styled(format!("Arguments as edited by {by} (what ran)"), heading));
        let edited = crate::sanitize::marked_argument_lines(&to.to_string());
        lines.extend(edited.into_iter().map(|l| Line::raw(format!("  {}", l.text))));
    }
    match &row.outcome {
        Some(outcome) => {
            let result = serde_json::to_string_pretty(&outcome.to_function_result()).unwrap_or_default();
            let code = outcome.code().map_or("ok", |c| c.as_str());
            let code_style = if outcome.is_error() {
                heading.fg(Color::Red)
            } else {
                heading.fg(Color::Green)
            };
            let mut head = vec![
                Span::styled("Outcome: ", heading),
                Span::styled(code, code_style),
                Span::styled(" (as the model sees it)", heading),
            ];
            // Per line: the pretty-printed result's own line breaks are not
            // hostile; serde escapes control characters inside strings, so
            // what is left to flag is bidi and zero-width characters.
            if result.lines().any(crate::sanitize::needs_warning) {
                head.push(Span::raw(" "));
                head.push(text::badge());
            }
            lines.push(Line::from(head));
            let style = if outcome.is_error() {
                Style::default().fg(Color::Red)
            } else {
                Style::default()
            };
            lines.extend(
                result
                    .lines()
                    .map(|l| Line::styled(format!("  {}", crate::sanitize::escape(l)), style)),
            );
        }
        None => {
            lines.push(Line::styled("Outcome (as the model sees it)", heading));
            lines.push(Line::styled("  not yet", Style::default().fg(Color::DarkGray)));
        }
    }
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .scroll((app.detail_scroll, 0))
        .block(pane_block(
            Line::from(text::fit(&title, area.width.saturating_sub(2) as usize)),
            focused,
        ))
        .render(area, buf);
}

/// The subagent with its whole id, as the detail has room for:
/// `subagent Explore aed6 (id aed64e52aca1f6d0c)`.
fn subagent_text(subagent: &crate::subagent::Subagent) -> String {
    let label = subagent.label();
    let short = label.strip_prefix("via ").unwrap_or(&label);
    match &subagent.id {
        Some(id) => format!("{short} (id {id})"),
        None => short.to_owned(),
    }
}
