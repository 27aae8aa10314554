//! The argument editor (`e` on a prompt): the call it edits, the text, and
//! what the text is now — approvable, or why not (the JSON position, the
//! schema's path) — over the whole screen but a margin.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph, Widget, Wrap};

use super::text;
use crate::tui::app::{ApprovalPrompt, ArgumentEditor, EditVerdict};

pub fn render(prompt: &ApprovalPrompt, editor: &ArgumentEditor, area: Rect, buf: &mut Buffer) {
    let modal = Rect {
        x: area.x + 1,
        y: area.y + 1,
        width: area.width.saturating_sub(2),
        height: area.height.saturating_sub(2),
    };
    Clear.render(modal, buf);
    let title = Line::from(vec![
        Span::styled(" Edit, then approve ", Style::default().add_modifier(Modifier::BOLD)),
        Span::raw(format!(
            "{} ({}) ",
            crate::sanitize::escape(&prompt.tool),
            crate::sanitize::escape(&prompt.call_id)
        )),
    ]);
    let block = Block::bordered()
        .border_type(BorderType::Double)
        .border_style(Style::default().fg(Color::Yellow))
        .title(title)
        .title_bottom(Line::raw(" Ctrl+S approves the edited call · Esc goes back unchanged ").right_aligned());
    let inner = block.inner(modal);
    block.render(modal, buf);

    let mut notes = vec![Line::styled(
        "Policy judges the edit again: a deny rule still denies.",
        Style::default().fg(Color::DarkGray),
    )];
    if editor
        .textarea
        .lines()
        .iter()
        .any(|l| crate::sanitize::needs_warning(l))
    {
        notes.push(Line::from(vec![
            text::badge(),
            Span::raw(" the text holds characters the prompt shows escaped; here they are as they are"),
        ]));
    }
    let verdict_style = match editor.verdict {
        EditVerdict::Valid(_) => Style::default().fg(Color::Green),
        _ => Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
    };
    let said = editor.verdict.describe();
    let said = if editor.refused {
        format!("✗ Ctrl+S refused: {}", said.trim_start_matches("✗ "))
    } else {
        said
    };
    let verdict = Line::styled(crate::sanitize::escape(&said), verdict_style);
    let width = inner.width.max(1) as usize;
    // A long schema message wraps; it never pushes the text off the screen.
    let verdict_rows = verdict.width().div_ceil(width).clamp(1, 4) as u16;
    let [notes_area, text_area, verdict_area] = Layout::vertical([
        Constraint::Length(notes.len() as u16),
        Constraint::Min(1),
        Constraint::Length(verdict_rows),
    ])
    .areas(inner);
    Paragraph::new(notes).render(notes_area, buf);
    editor.textarea.render(text_area, buf);
    Paragraph::new(verdict)
        .wrap(Wrap { trim: false })
        .render(verdict_area, buf);
}
