//! Full help, generated from the key table.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget};

use crate::tui::keys::{HELP_ORDER, help_rows};

pub fn render(scroll: u16, area: Rect, buf: &mut Buffer) {
    let width = area.width.saturating_sub(4).min(90);
    let height = area.height.saturating_sub(2);
    let modal = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + 1,
        width,
        height,
    };
    let mut lines = Vec::new();
    for context in HELP_ORDER {
        lines.push(Line::styled(
            context.title(),
            Style::default().add_modifier(Modifier::BOLD),
        ));
        for (shown, help) in help_rows(context) {
            lines.push(Line::from(vec![
                Span::styled(format!("  {shown:<12}"), Style::default().fg(Color::Cyan)),
                Span::raw(help),
            ]));
        }
        lines.push(Line::raw(""));
    }
    Clear.render(modal, buf);
    Paragraph::new(lines)
        .scroll((scroll, 0))
        .block(
            Block::bordered()
                .title(" Keys (Esc closes) ")
                .border_style(Style::default().fg(Color::Cyan)),
        )
        .render(modal, buf);
}
