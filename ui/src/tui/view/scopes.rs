//! The scope tree, and the declarations visible from the selected scope.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::{is_focused, pane_block, text};
use crate::tui::app::{App, Pane};

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let focused = is_focused(app, Pane::Scopes);
    let tree_height = (app.scopes.len() as u16 + 2).min(area.height / 2).max(3);
    let [tree_area, decl_area] = Layout::vertical([Constraint::Length(tree_height), Constraint::Min(3)]).areas(area);

    let inner_rows = tree_area.height.saturating_sub(2) as usize;
    let first = app.selected_scope.saturating_sub(inner_rows.saturating_sub(1));
    let width = tree_area.width.saturating_sub(2) as usize;
    let lines: Vec<Line> = app
        .scopes
        .iter()
        .enumerate()
        .skip(first)
        .take(inner_rows)
        .map(|(i, entry)| {
            let mut label = format!("{}{}", "  ".repeat(entry.depth), entry.label);
            if let Some(scope) = &entry.scope {
                if let Some(owner) = scope.owner() {
                    label.push_str(&format!(" · {owner}"));
                }
                if let Some(session) = scope.session_id() {
                    label.push_str(&format!(" · {session}"));
                }
            }
            if let Some(connected) = agents_root_count(app, i) {
                label.push_str(&format!(" · {connected} connected"));
            }
            let (label, warn) = text::escaped(&label);
            let style = if i == app.selected_scope {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
            let held = app
                .held
                .iter()
                .filter(|h| entry.scope.as_ref() == Some(&h.scope))
                .count();
            let held_badge = format!(" ⚠ {held} held ");
            let room = if held > 0 {
                width.saturating_sub(held_badge.chars().count())
            } else {
                width
            };
            let mut spans = vec![Span::styled(text::fit(&label, room), style)];
            if warn {
                spans.push(text::badge());
            }
            if held > 0 {
                // A server whose tool changed since it was approved: H reviews it.
                spans.push(Span::styled(
                    held_badge,
                    Style::default().fg(Color::Black).bg(Color::Yellow),
                ));
            }
            Line::from(spans)
        })
        .collect();
    Paragraph::new(lines)
        .block(pane_block(Line::from(" Scopes "), focused))
        .render(tree_area, buf);

    // Says "tools", so the count is never read as the agents connected.
    let title = format!(
        " {}: {} ",
        selected_label(app),
        match app.declarations.len() {
            0 => "no tools".to_owned(),
            1 => "1 tool".to_owned(),
            n => format!("{n} tools"),
        }
    );
    let mut lines = Vec::new();
    for declaration in &app.declarations {
        let (name, warn) = text::escaped(declaration.name());
        let mut head = vec![Span::styled(
            name,
            Style::default().fg(Color::Cyan).add_modifier(Modifier::BOLD),
        )];
        if warn {
            head.push(text::badge());
        }
        let selected = app.selected_scope();
        let held =
            (app.held.iter()).any(|h| h.tool == declaration.name() && selected.is_some_and(|s| s.is_within(&h.scope)));
        if held {
            head.push(Span::styled(
                " ⚠ held: definition changed (H) ",
                Style::default().fg(Color::Black).bg(Color::Yellow),
            ));
        }
        lines.push(Line::from(head));
        let (description, _) = text::escaped(declaration.description());
        lines.push(Line::styled(
            format!("  {description}"),
            Style::default().fg(Color::Gray),
        ));
        let schema = serde_json::to_string_pretty(declaration.parameters()).unwrap_or_default();
        for line in schema.lines() {
            lines.push(Line::styled(
                format!("  {}", crate::sanitize::escape(line)),
                Style::default().fg(Color::DarkGray),
            ));
        }
    }
    if lines.is_empty() {
        lines.push(Line::styled(
            "no tools are visible here",
            Style::default().fg(Color::DarkGray),
        ));
    }
    Paragraph::new(lines)
        .scroll((app.declarations_scroll, 0))
        .block(pane_block(
            Line::from(text::fit(&title, area.width.saturating_sub(2) as usize)),
            focused,
        ))
        .render(decl_area, buf);
}

/// For the scope tree's `agents` root in a console serving agents, how many
/// are connected.
fn agents_root_count(app: &App, index: usize) -> Option<usize> {
    let entry = app.scopes.get(index)?;
    let scope = entry.scope.as_ref()?;
    let root = scope.parent().is_none() && scope.session_id().is_none() && entry.label == "agents";
    root.then_some(app.info.agents).flatten()
}

fn selected_label(app: &App) -> String {
    app.scopes
        .get(app.selected_scope)
        .map_or_else(|| "global".to_owned(), |s| crate::sanitize::escape(&s.label))
}
