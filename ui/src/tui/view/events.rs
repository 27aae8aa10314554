//! Change events, agent connects, batch starts and ends, policy reloads:
//! newest last.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::{is_focused, pane_block, text};
use crate::tui::app::{App, Pane};

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let focused = is_focused(app, Pane::Events);
    let rows = area.height.saturating_sub(2) as usize;
    let last = app.events_scroll.unwrap_or(app.events.len().saturating_sub(1));
    let end = (last + 1).min(app.events.len());
    let start = end.saturating_sub(rows);
    let width = area.width.saturating_sub(2) as usize;
    let lines: Vec<Line> = app
        .events
        .range(start..end)
        .map(|e| {
            let at = e.at.saturating_duration_since(app.started);
            Line::from(vec![
                Span::styled(
                    format!("{:>8} ", format!("+{:.1}s", at.as_secs_f64())),
                    Style::default().fg(Color::DarkGray),
                ),
                Span::raw(text::fit(&crate::sanitize::escape(&e.text), width.saturating_sub(9))),
            ])
        })
        .collect();
    let title = if app.events_scroll.is_some() {
        " Events (scrolled; End follows) "
    } else {
        " Events "
    };
    Paragraph::new(lines)
        .block(pane_block(Line::from(title), focused))
        .render(area, buf);
}
