//! The review of a held MCP tool: what was approved and what the server
//! defines now, as a diff. Every piece of text came from an MCP server, so
//! each is escaped, and a line that needed it carries the ⚠ badge.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget, Wrap};

use super::text;
use crate::tui::app::diff::{Change, DiffLine};
use crate::tui::app::{App, HeldTool};

pub fn render(app: &App, selected: usize, scroll: u16, held: &HeldTool, area: Rect, buf: &mut Buffer) {
    let width = area.width.saturating_sub(4).min(120);
    let height = area.height.saturating_sub(2);
    let modal = Rect {
        x: area.x + (area.width.saturating_sub(width)) / 2,
        y: area.y + 1,
        width,
        height,
    };
    let (tool, tool_warn) = text::escaped(&held.tool);
    let (server, server_warn) = text::escaped(&held.server);
    let mut head = vec![
        Span::styled(tool, Style::default().fg(Color::Cyan).add_modifier(Modifier::BOLD)),
        Span::raw(format!(
            " in {server}: definition changed since approved; held ({} of {})",
            selected + 1,
            app.held.len()
        )),
    ];
    if tool_warn || server_warn {
        head.push(Span::raw(" "));
        head.push(text::badge());
    }
    let mut lines = vec![
        Line::from(head),
        Line::styled(
            "[-old-] {+new+}; - a line only in the approved definition, + a line only in the new one",
            Style::default().fg(Color::DarkGray),
        ),
    ];
    if !app.held.iter().any(|h| h.same_definition(held)) {
        lines.push(Line::styled(
            "⚠ the server changed this tool again since this was shown: y approves nothing; Esc, then H, shows it as it is",
            Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
        ));
    }
    for line in held.diff() {
        if matches!(line, DiffLine::Heading { .. }) {
            lines.push(Line::raw(""));
        }
        lines.push(render_line(&line));
    }
    Clear.render(modal, buf);
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .scroll((scroll, 0))
        .block(
            Block::bordered()
                .title(" Held MCP tool: y approves the new definition, Esc leaves it held ")
                .border_style(Style::default().fg(Color::Yellow)),
        )
        .render(modal, buf);
}

fn render_line(line: &DiffLine) -> Line<'static> {
    let removed = Style::default().fg(Color::Red).add_modifier(Modifier::CROSSED_OUT);
    let added = Style::default().fg(Color::Green).add_modifier(Modifier::BOLD);
    match line {
        DiffLine::Heading { .. } => Line::styled(line.plain(), Style::default().add_modifier(Modifier::BOLD)),
        DiffLine::Text(pieces) => {
            let mut warn = false;
            let mut spans = Vec::new();
            let whole = |change: Change| pieces.len() == 1 && pieces[0].0 == change;
            if whole(Change::Removed) {
                spans.push(Span::styled("- ", removed.remove_modifier(Modifier::CROSSED_OUT)));
            } else if whole(Change::Added) {
                spans.push(Span::styled("+ ", added));
            } else {
                spans.push(Span::raw("  "));
            }
            for (change, piece) in pieces {
                let (escaped, hostile) = text::escaped(piece);
                warn |= hostile;
                spans.push(match change {
                    Change::Same => Span::raw(escaped),
                    Change::Removed if whole(Change::Removed) => Span::styled(escaped, removed),
                    Change::Added if whole(Change::Added) => Span::styled(escaped, added),
                    Change::Removed => Span::styled(format!("[-{escaped}-]"), removed),
                    Change::Added => Span::styled(format!("{{+{escaped}+}}"), added),
                });
            }
            if warn {
                spans.push(Span::raw(" "));
                spans.push(text::badge());
            }
            Line::from(spans)
        }
    }
}
