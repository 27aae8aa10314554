//! The header: what waits for the human first, then the session, agents,
//! counts, policy and journal — dropped from the least important up when the
//! line is too narrow, and a path shortened to its file name before that.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::sanitize;
use crate::tui::app::{App, plural};

/// One part of the header: its priority (lower stays longer), the full
/// text, a shorter one, and its style.
struct Part {
    priority: u8,
    full: String,
    short: Option<String>,
    style: Style,
}

fn file_name(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_owned()
}

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let plain = Style::default();
    let mut parts = Vec::new();
    if !app.prompts.is_empty() {
        parts.push(Part {
            priority: 0,
            full: format!(" {} awaiting approval ", app.prompts.len()),
            short: None,
            style: Style::default().fg(Color::Black).bg(Color::Yellow),
        });
    }
    parts.push(Part {
        priority: 1,
        full: sanitize::escape(&app.info.title),
        short: Some(super::text::fit(&sanitize::escape(&app.info.title), 24)),
        style: Style::default().add_modifier(Modifier::BOLD),
    });
    if let Some(attach) = &app.info.attach {
        // Only the console serve runs in shows the code: it is for the human
        // at that terminal to carry to another one. It outlasts every other
        // part but the waiting count.
        let attached = format!("{} attached", attach.attached.len());
        let (full, short) = match (&app.role, &attach.code) {
            // `--web` alone: the code pairs phones (`tether web pair`), nothing attaches.
            (crate::tui::app::ScreenRole::Main, Some(code)) if !attach.attaching => {
                (format!("pairing code {code}"), format!("code {code}"))
            }
            (crate::tui::app::ScreenRole::Main, Some(code)) => (
                format!("attach code {code} · {attached}"),
                format!("code {code} · {attached}"),
            ),
            (crate::tui::app::ScreenRole::Main, None) => {
                (format!("no attach code · {attached}"), format!("no code · {attached}"))
            }
            _ => (attached.clone(), attached),
        };
        parts.push(Part {
            priority: 0,
            full,
            short: Some(short),
            style: Style::default().fg(Color::Cyan),
        });
    }
    if let Some(agents) = app.info.agents {
        parts.push(Part {
            priority: 2,
            full: format!("agents: {agents}"),
            short: None,
            style: plain,
        });
    }
    parts.push(Part {
        priority: 4,
        full: format!(
            "{} · {} · {}",
            plural(app.registry.tool_count(), "tool"),
            plural(app.scopes.len().saturating_sub(1), "scope"),
            plural(app.registry.listener_count(), "listener")
        ),
        short: None,
        style: plain,
    });
    // What happens to the calls no rule decides outlasts the policy's name:
    // it is what a person most needs to know about the file (and without a
    // policy file every call no implicit rule decides is asked).
    let (policy, unmatched) = match app.info.policy.as_deref() {
        Some(text) => match text.rsplit_once(" (unmatched calls: ") {
            Some((file, rest)) => (
                sanitize::escape(file),
                Some(sanitize::escape(rest.trim_end_matches(')'))),
            ),
            None => (sanitize::escape(text), None),
        },
        None => ("none".to_owned(), Some("ask".to_owned())),
    };
    parts.push(Part {
        priority: 3,
        short: Some(format!("policy: {}", file_name(&policy))),
        full: format!("policy: {policy}"),
        style: plain,
    });
    if let Some(unmatched) = unmatched {
        parts.push(Part {
            priority: 1,
            short: Some(format!("unmatched: {unmatched}")),
            full: format!("unmatched calls: {unmatched}"),
            style: plain,
        });
    }
    if let Some(reviews) = app.reviews.header() {
        parts.push(Part {
            priority: 1,
            short: None,
            full: reviews,
            style: plain,
        });
    }
    if let Some(journal) = &app.info.journal {
        let journal = sanitize::escape(journal);
        parts.push(Part {
            priority: 5,
            short: Some(format!("journal: {}", file_name(&journal))),
            full: format!("journal: {journal}"),
            style: plain,
        });
    }

    const BADGE: &str = " Tether ";
    const SEP: &str = " │ ";
    let width = area.width as usize;
    let used = |parts: &[(usize, String)]| -> usize {
        BADGE.chars().count()
            + parts
                .iter()
                .map(|(_, t)| t.chars().count() + SEP.chars().count())
                .sum::<usize>()
    };
    // Start with every part in full, then shorten and drop, least important first.
    let mut shown: Vec<(usize, String)> = parts.iter().enumerate().map(|(i, p)| (i, p.full.clone())).collect();
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(parts[i].priority));
    for &i in &order {
        if used(&shown) <= width {
            break;
        }
        if let (Some(short), Some(slot)) = (&parts[i].short, shown.iter_mut().find(|(j, _)| *j == i)) {
            slot.1.clone_from(short);
        }
    }
    // Then keep, most important first, every part that still fits.
    let mut kept: Vec<(usize, String)> = Vec::new();
    for &i in order.iter().rev() {
        let Some(part) = shown.iter().find(|(j, _)| *j == i) else {
            continue;
        };
        let mut with = kept.clone();
        with.push(part.clone());
        if used(&with) <= width || parts[i].priority == 0 {
            kept = with;
        }
    }
    kept.sort_by_key(|(i, _)| *i);
    let shown = kept;
    let mut spans = vec![Span::styled(
        BADGE,
        Style::default()
            .fg(Color::Black)
            .bg(Color::Cyan)
            .add_modifier(Modifier::BOLD),
    )];
    for (n, (i, text)) in shown.into_iter().enumerate() {
        spans.push(if n == 0 {
            Span::raw(" ")
        } else {
            Span::styled(SEP, Style::default().fg(Color::DarkGray))
        });
        spans.push(Span::styled(text, parts[i].style));
    }
    Line::from(spans).render(area, buf);
}
