//! The header: session, counts, policy, agents, journal.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::sanitize;
use crate::tui::app::App;

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let sep = || Span::styled(" │ ", Style::default().fg(Color::DarkGray));
    let scopes = app.scopes.len().saturating_sub(1);
    let mut spans = vec![
        Span::styled(
            " Tether ",
            Style::default()
                .fg(Color::Black)
                .bg(Color::Cyan)
                .add_modifier(Modifier::BOLD),
        ),
        Span::raw(" "),
        Span::styled(
            sanitize::escape(&app.info.title),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        sep(),
        Span::raw(format!(
            "{} tools · {} scopes · {} listeners",
            app.registry.tool_count(),
            scopes,
            app.registry.listener_count()
        )),
        sep(),
        Span::raw(format!(
            "policy: {}",
            app.info.policy.as_deref().map_or("none".into(), sanitize::escape)
        )),
    ];
    if let Some(agents) = app.info.agents {
        spans.push(sep());
        spans.push(Span::raw(format!("agents: {agents}")));
    }
    if let Some(journal) = &app.info.journal {
        spans.push(sep());
        spans.push(Span::raw(format!("journal: {}", sanitize::escape(journal))));
    }
    if !app.prompts.is_empty() {
        spans.push(sep());
        spans.push(Span::styled(
            format!(" {} awaiting approval ", app.prompts.len()),
            Style::default().fg(Color::Black).bg(Color::Yellow),
        ));
    }
    Line::from(spans).render(area, buf);
}
