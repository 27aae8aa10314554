//! Drawing: pure functions of the app state, one file per pane. Nothing here
//! changes state; nothing here writes text a model or an agent sent without
//! escaping it first.

mod batch;
mod detail;
mod edit;
mod events;
mod full_arguments;
mod group;
mod header;
mod help;
mod pairing;
mod pin_review;
mod prompt;
mod prompt_keys;
mod rules;
mod scopes;
mod text;

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Widget};

use crate::tui::app::{App, Overlay, Pane};
use crate::tui::keys;

pub use text::{clip_lines, pretty_arguments};

/// Draws the whole screen.
pub fn draw(app: &App, frame: &mut Frame) {
    render(app, frame.area(), frame.buffer_mut());
}

/// The panes' rectangles for a screen size.
pub struct Areas {
    pub header: Rect,
    pub scopes: Rect,
    pub batch: Rect,
    pub detail: Rect,
    pub events: Rect,
    pub footer: Rect,
}

pub fn areas(area: Rect) -> Areas {
    let events_height = if area.height >= 40 { 8 } else { 5 };
    let [header, body, events, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(6),
        Constraint::Length(events_height),
        Constraint::Length(1),
    ])
    .areas(area);
    let left_width = (area.width * 3 / 10).clamp(24, 48);
    let [scopes, right] = Layout::horizontal([Constraint::Length(left_width), Constraint::Min(20)]).areas(body);
    let [batch, detail] = Layout::vertical([Constraint::Percentage(58), Constraint::Percentage(42)]).areas(right);
    Areas {
        header,
        scopes,
        batch,
        detail,
        events,
        footer,
    }
}

/// Renders the whole screen into a buffer (what tests snapshot).
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let areas = areas(area);
    header::render(app, areas.header, buf);
    scopes::render(app, areas.scopes, buf);
    batch::render(app, areas.batch, buf);
    detail::render(app, areas.detail, buf);
    events::render(app, areas.events, buf);
    footer(app, areas.footer, buf);
    if !app.prompts.is_empty() {
        prompt::render(app, area, buf);
    }
    match &app.overlay {
        Overlay::Always {
            choices,
            selected,
            confirming,
        } if !app.prompts.is_empty() => {
            rules::chooser(app, choices, (*selected, *confirming), area, buf);
        }
        Overlay::Rules { selected } => rules::list(app, *selected, area, buf),
        Overlay::Group(group) => group::render(app, group, area, buf),
        Overlay::PinReview {
            selected,
            scroll,
            shown,
        } => pin_review::render(app, *selected, *scroll, shown, area, buf),
        _ => {}
    }
    if let Overlay::Help { scroll } = &app.overlay {
        help::render(*scroll, area, buf);
    }
    if let Overlay::Pairing { url, qr } = &app.overlay {
        pairing::render(url, qr, area, buf);
    }
    if app.confirm_quit {
        confirm_quit(app, area, buf);
    }
}

/// A `width` × `height` box in the middle of `area`.
fn centered(area: Rect, width: u16, height: u16) -> Rect {
    Rect {
        x: area.x + area.width.saturating_sub(width) / 2,
        y: area.y + area.height.saturating_sub(height) / 2,
        width,
        height,
    }
}

/// "Quit?" over everything, saying what quitting would end.
fn confirm_quit(app: &App, area: Rect, buf: &mut Buffer) {
    let mut ends = Vec::new();
    if !app.prompts.is_empty() {
        ends.push(format!(
            "{} waiting (answered unavailable)",
            crate::tui::app::plural(app.prompts.len(), "approval")
        ));
    }
    if let Some(agents) = app.info.agents.filter(|n| *n > 0) {
        ends.push(format!("{} connected", crate::tui::app::plural(agents, "agent")));
    }
    let lines = vec![
        Line::styled("Quit Tether?", Style::default().add_modifier(Modifier::BOLD)),
        Line::raw(ends.join(", ")),
        Line::raw("q again or Enter quits; any other key stays"),
    ];
    let width = lines.iter().map(Line::width).max().unwrap_or(0).saturating_add(4) as u16;
    let width = width.min(area.width);
    let height = 5.min(area.height);
    let modal = centered(area, width, height);
    ratatui::widgets::Clear.render(modal, buf);
    let block = Block::bordered()
        .border_type(BorderType::Double)
        .border_style(Style::default().fg(Color::Red));
    let inner = block.inner(modal);
    block.render(modal, buf);
    ratatui::widgets::Paragraph::new(lines).render(inner, buf);
}

/// A pane's frame: bold title and a bright border when focused.
pub(crate) fn pane_block(title: Line<'_>, focused: bool) -> Block<'_> {
    let border = if focused {
        Style::default().fg(Color::Cyan)
    } else {
        Style::default().fg(Color::DarkGray)
    };
    Block::bordered()
        .border_type(if focused { BorderType::Thick } else { BorderType::Plain })
        .border_style(border)
        .title(title)
}

pub(crate) fn is_focused(app: &App, pane: Pane) -> bool {
    app.focus == pane && app.prompts.is_empty() && matches!(app.overlay, Overlay::None)
}

/// The keys that work now, as many whole entries as fit; `?` (all keys) and
/// `q` (quit) are kept at the end whatever else has to go, with `…` where
/// keys were left out.
fn footer(app: &App, area: Rect, buf: &mut Buffer) {
    let context = app.key_context();
    let key_style = Style::default().fg(Color::Black).bg(Color::Gray);
    let title = format!(" {} ", context.title());
    let mut pairs = keys::footer(context);
    if context == keys::KeyContext::Always && app.keep_into.is_none() {
        // Nothing to keep a rule in: the key is not offered.
        pairs.retain(|(keys, _)| *keys != "s");
    }
    if let (keys::KeyContext::Prompt, Some(prompt)) = (context, app.prompts.current()) {
        // What the call cannot take (edits it cannot carry) is not offered.
        pairs.retain(|(shown, _)| {
            keys::footer_bindings(context)
                .filter(|b| b.shown == *shown)
                .all(|b| prompt_keys::offered(prompt, b.action))
        });
    }
    let mut essential = Vec::new();
    if !matches!(
        context,
        keys::KeyContext::Reason
            | keys::KeyContext::Edit
            | keys::KeyContext::Help
            | keys::KeyContext::FullArguments
            | keys::KeyContext::Always
            | keys::KeyContext::Rules
            | keys::KeyContext::PinReview
    ) {
        for pair in keys::footer(keys::KeyContext::Global) {
            if matches!(pair.0, "?" | "q") {
                essential.push(pair);
            } else {
                pairs.push(pair);
            }
        }
    }
    let cost = |(keys, what): &(&str, &str)| keys.chars().count() + what.chars().count() + 4;
    let width = area.width as usize;
    // Whole entries only: on a narrow screen the title goes first, then the
    // essential keys from the left, rather than a word cut at the edge.
    let mut title = Some(title);
    while essential.iter().map(cost).sum::<usize>() + title.as_ref().map_or(0, |t| t.chars().count()) > width {
        if title.take().is_none() && !essential.is_empty() {
            essential.remove(0);
        }
    }
    let mut room = width
        .saturating_sub(title.as_ref().map_or(0, |t| t.chars().count()))
        .saturating_sub(essential.iter().map(cost).sum());
    let mut shown = Vec::new();
    let mut cut = false;
    for pair in pairs {
        // Entries come most useful first: after one that does not fit, the
        // rest are left out whole (a later, shorter one is less useful).
        if !cut && cost(&pair) + 2 <= room {
            room -= cost(&pair);
            shown.push(pair);
        } else {
            cut = true;
        }
    }
    let key = |(keys, what): (&str, &str)| {
        [
            Span::raw(" "),
            Span::styled(format!(" {keys} "), key_style),
            Span::raw(format!(" {what}")),
        ]
    };
    let mut spans: Vec<Span> = title
        .into_iter()
        .map(|t| Span::styled(t, Style::default().add_modifier(Modifier::BOLD)))
        .collect();
    spans.extend(shown.into_iter().flat_map(key));
    if cut && room >= 2 {
        spans.push(Span::styled(" …", Style::default().fg(Color::DarkGray)));
    }
    spans.extend(essential.into_iter().flat_map(key));
    Line::from(spans).render(area, buf);
}
