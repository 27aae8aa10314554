//! `W`: the one-time link that pairs a phone or browser, and its QR code,
//! over everything until Esc.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph, Widget, Wrap};

pub fn render(url: &str, qr: &[String], area: Rect, buf: &mut Buffer) {
    let widest = qr.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    // The link on one line when it fits: it is read, or copied, whole.
    let widest = widest.max(url.chars().count()).max(60);
    let width = u16::try_from(widest + 4).unwrap_or(u16::MAX).min(area.width);
    let mut lines: Vec<Line> = qr.iter().map(|l| Line::raw(l.clone())).collect();
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        crate::sanitize::escape(url),
        Style::default().fg(Color::Cyan),
    ));
    lines.push(Line::raw(
        "Open it on the phone or browser: it pairs one device, once, within 2 minutes.",
    ));
    let height = u16::try_from(lines.len() + 4).unwrap_or(u16::MAX).min(area.height);
    let modal = super::centered(area, width, height);
    Clear.render(modal, buf);
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .block(
            Block::bordered()
                .title(" Pair a phone or browser (Esc closes) ")
                .border_style(Style::default().fg(Color::Cyan)),
        )
        .render(modal, buf);
}
