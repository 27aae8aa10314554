//! The full view of a prompt's arguments (`v`): every line, scrolled,
//! wrapped or not, searched; a hostile character off screen is named in
//! the title.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph, Widget};

use crate::sanitize::ArgumentLine;
use crate::tui::app::{ApprovalPrompt, FullView, wrapped_rows};

pub fn render(prompt: &ApprovalPrompt, view: &FullView, area: Rect, buf: &mut Buffer) {
    let modal = Rect {
        x: area.x + 1,
        y: area.y + 1,
        width: area.width.saturating_sub(2),
        height: area.height.saturating_sub(2),
    };
    let marked = crate::sanitize::marked_argument_lines(&prompt.arguments);
    let lines: Vec<&str> = marked.iter().map(|l| l.text.as_str()).collect();
    let total = lines.len();
    let width = modal.width.saturating_sub(2).max(1) as usize;
    let visible = modal.height.saturating_sub(2) as usize;
    let first = (view.scroll as usize).min(total.saturating_sub(1));
    let query = view.query.as_ref().map(|(q, _)| q.to_lowercase());
    let mut rows: Vec<Line> = Vec::with_capacity(visible);
    let mut last = first;
    // Rows of the first line scrolled past, and of the last line shown, of
    // how many: a line longer than the screen is read page by page.
    let mut skipped = 0;
    let mut last_rows = (0, 0);
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
            let count = wrapped_rows(line, width);
            let skip = if i == first { view.row.min(count - 1) } else { 0 };
            if i == first {
                skipped = skip;
            }
            let room = visible - rows.len();
            for chunk in chars.chunks(width).skip(skip).take(room) {
                rows.push(Line::styled(chunk.iter().collect::<String>(), style));
            }
            if chars.is_empty() {
                rows.push(Line::raw(""));
            }
            last_rows = ((skip + room).min(count), count);
        } else {
            let shown: String = line.chars().skip(view.hscroll as usize).take(width).collect();
            rows.push(Line::styled(shown, style));
        }
    }
    let (shown, count) = last_rows;
    let within = if first == last && (skipped > 0 || shown < count) {
        format!(" (rows {}-{shown} of {count})", skipped + 1)
    } else if skipped > 0 {
        format!(" (line {} from row {})", first + 1, skipped + 1)
    } else if shown < count {
        format!(" (line {} rows 1-{shown} of {count})", last + 1)
    } else {
        String::new()
    };
    let mut title = format!(
        " All arguments of {} ({}): lines {}-{} of {}{within} · {} · Esc back ",
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
    // A hostile character off screen is named first, where a narrow
    // terminal does not cut the title.
    let off_screen = |(i, l): &(usize, &ArgumentLine)| (*i < first || *i > last) && !l.hostile.is_empty();
    let mut hostile = marked.iter().enumerate().filter(off_screen);
    if let Some((i, _)) = hostile.clone().find(|(i, _)| *i > last).or_else(|| hostile.next()) {
        title = format!(" ⚠ in line {} ·{title}", i + 1);
    }
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
