//! What the screen keeps at every width, rendered with ratatui's
//! `TestBackend`: the header and footer, help without repeats, no pane over
//! another at 80×24, and the reason editor's cursor. (The snapshots are in
//! `render.rs`.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod render_support;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use render_support::{SIZES, render, scene};
use tether_console::tui::app::{Overlay, Pane};
use tether_console::tui::view;

#[test]
fn help_lists_each_key_once_per_section() {
    let mut scene = scene();
    scene.app.overlay = Overlay::Help { scroll: 0 };
    let rendered = render(&scene.app, (200, 50));
    let mut section = String::new();
    let mut seen = std::collections::HashSet::new();
    for row in rendered.lines() {
        // The help modal is 90 wide, centred: its inside is columns 56..144.
        let inner: String = row.trim_start_matches('"').chars().skip(56).take(88).collect();
        let inner = inner.trim_end();
        if !inner.starts_with(' ') && !inner.is_empty() {
            section = inner.to_owned();
        } else if let Some(key) = inner.strip_prefix("  ").and_then(|r| r.split("  ").next()) {
            if !key.trim().is_empty() {
                assert!(
                    seen.insert((section.clone(), key.to_owned())),
                    "{key:?} twice in {section:?}:\n{rendered}"
                );
            }
        }
    }
}

#[test]
fn header_and_footer_keep_what_matters_most_at_every_width() {
    let mut asking = scene().with_batch();
    asking.prompt("call_4", "save_note", r#"{"title":"a","text":"b"}"#, None, 60_000);
    asking.prompt("call_7", "save_note", r#"{"title":"c","text":"d"}"#, None, 60_000);
    for size in [(80, 24), (120, 40), (200, 50)] {
        let rendered = render(&asking.app, size);
        let rows: Vec<&str> = rendered.lines().collect();
        let (header, footer) = (rows[0], rows[rows.len() - 1]);
        assert!(header.contains("2 awaiting approval"), "{size:?}: {header}");
        assert!(
            footer.contains(" ?  all keys") && footer.contains(" q  quit"),
            "{size:?}: {footer}"
        );
    }
    let mut idle = scene();
    idle.app.focus = Pane::Batch;
    for size in [(80, 24), (120, 40)] {
        let rendered = render(&idle.app, size);
        let footer = rendered.lines().last().unwrap();
        assert!(
            footer.contains(" ?  all keys") && footer.contains(" q  quit"),
            "{size:?}: {footer}"
        );
        let header = rendered.lines().next().unwrap();
        assert!(
            header.contains("policy: quickstart.policy.json") || header.contains("policy: demos/"),
            "{size:?}: {header}"
        );
    }
}

/// What happens to the calls no rule decides is the last thing about the
/// policy to go: it stays at 80 columns, with agents waiting, when the
/// policy's name does not fit.
#[test]
fn the_header_keeps_what_unmatched_calls_get_at_every_width() {
    for (policy, expected) in [
        (
            Some("/home/dev/.config/tether/policy.json (unmatched calls: ask)"),
            "ask",
        ),
        (
            Some("/home/dev/.config/tether/policy.json (unmatched calls: allow)"),
            "allow",
        ),
        (None, "ask"),
    ] {
        let mut asking = scene().with_batch();
        asking.app.info.policy = policy.map(str::to_owned);
        asking.app.info.agents = Some(3);
        asking.app.info.title = "serving /run/user/1000/tether/console.sock".into();
        asking.prompt("call_4", "save_note", r#"{"title":"a","text":"b"}"#, None, 60_000);
        for size in [(80, 24), (120, 40), (200, 50)] {
            let rendered = render(&asking.app, size);
            let header = rendered.lines().next().unwrap();
            assert!(
                header.contains(&format!("unmatched calls: {expected}"))
                    || header.contains(&format!("unmatched: {expected}")),
                "{policy:?} {size:?}: {header}"
            );
            assert!(header.contains("1 awaiting approval"), "{size:?}: {header}");
        }
    }
}

#[test]
fn nothing_overlaps_at_80x24() {
    let areas = view::areas(ratatui::layout::Rect::new(0, 0, 80, 24));
    let all = [
        areas.header,
        areas.scopes,
        areas.batch,
        areas.detail,
        areas.events,
        areas.footer,
    ];
    for (i, a) in all.iter().enumerate() {
        assert!(a.width > 0 && a.height > 0, "pane {i} vanished");
        for b in &all[i + 1..] {
            assert!(!a.intersects(*b), "{a:?} overlaps {b:?}");
        }
    }
}

/// Issue 14 item 11 says the reason editor has no visible cursor; the frame
/// has one (a reversed cell) with text and empty, as this pins down.
#[test]
fn the_reason_editor_shows_its_cursor_where_the_next_character_goes() {
    let mut scene = scene().with_batch();
    scene.prompt("call_4", "save_note", "{}", None, 60_000);
    let mut textarea = tui_textarea::TextArea::default();
    textarea.insert_str("use the staging bucket\ninstead");
    scene.app.overlay = Overlay::Reason(Box::new(textarea));
    for size in SIZES {
        let terminal = drawn(&scene.app, size);
        let buffer = terminal.backend().buffer();
        let at = where_it_starts(buffer, "instead").unwrap_or_else(|| panic!("no reason text at {size:?}"));
        let cursor = &buffer[(at.0 + 7, at.1)];
        assert!(
            cursor.modifier.contains(ratatui::style::Modifier::REVERSED),
            "{size:?}: the cell after the text is not drawn as a cursor: {cursor:?}"
        );
    }
    // Empty, as `n` opens it: the placeholder shows one cell in, after the
    // cursor on the first cell, where typing starts.
    let mut textarea = tui_textarea::TextArea::default();
    textarea.set_placeholder_text("why? (optional; the model reads this)");
    scene.app.overlay = Overlay::Reason(Box::new(textarea));
    let terminal = drawn(&scene.app, (80, 24));
    let buffer = terminal.backend().buffer();
    let at = where_it_starts(buffer, "why?").expect("the placeholder");
    let cursor = &buffer[(at.0 - 1, at.1)];
    assert!(
        cursor.modifier.contains(ratatui::style::Modifier::REVERSED),
        "an empty editor shows no cursor at {at:?}: {cursor:?}\n{}",
        terminal.backend()
    );
}

/// `app` drawn in a terminal of `(width, height)`.
fn drawn(app: &tether_console::tui::app::App, (width, height): (u16, u16)) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| view::draw(app, frame)).unwrap();
    terminal
}

/// The cell where `text` (ASCII) starts on one row of `buffer`.
fn where_it_starts(buffer: &ratatui::buffer::Buffer, text: &str) -> Option<(u16, u16)> {
    let area = buffer.area;
    let width = u16::try_from(text.len()).unwrap();
    (0..area.height)
        .flat_map(|y| (0..area.width).map(move |x| (x, y)))
        .find(|&(x, y)| {
            let row: String = (x..area.width.min(x + width))
                .map(|x| buffer[(x, y)].symbol())
                .collect();
            row == text
        })
}
