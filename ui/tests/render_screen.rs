//! Screen parts (issue 28 item 8), drawn with `TestBackend` at 80×24 (the
//! app's default idea of the terminal, as before its first frame) and keys
//! sent to the app: the footer keeps whole entries, help pages with
//! PgUp/PgDn, and a long wrapped line is read page by page.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod render_support;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use render_support::{render, scene};
use tether_console::tui::app::{App, FullView, Overlay, Pane};
use tether_console::tui::keys::{BINDINGS, KeyContext};

fn key(app: &mut App, code: KeyCode) {
    app.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
}

/// Columns `from..to` of every row drawn.
fn inside(rendered: &str, from: usize, to: usize) -> Vec<String> {
    rendered
        .lines()
        .map(|l| {
            l.trim_matches('"')
                .chars()
                .skip(from)
                .take(to - from)
                .collect::<String>()
        })
        .collect()
}

#[test]
fn the_footer_shows_only_whole_entries_at_every_width() {
    let mut states: Vec<(&str, App)> = Vec::new();
    for pane in [Pane::Scopes, Pane::Batch, Pane::Detail, Pane::Events] {
        let mut s = scene().with_batch();
        s.app.focus = pane;
        states.push(("pane", s.app));
    }
    let mut s = scene().with_batch();
    s.prompt("call_4", "save_note", "{}", None, 60_000);
    states.push(("prompt", s.app));
    let mut s = scene().with_batch();
    s.prompt("call_4", "save_note", "{}", None, 60_000);
    s.app.overlay = Overlay::FullArguments(FullView::default());
    states.push(("full view", s.app));
    let mut s = scene().with_batch();
    s.app.overlay = Overlay::Help { scroll: 0 };
    states.push(("help", s.app));
    let ends: Vec<&str> = BINDINGS.iter().map(|b| b.help).chain(["…"]).collect();
    for (name, app) in &states {
        for width in [80, 120, 200, 60, 44, 36, 30] {
            let rendered = render(app, (width, 24));
            let footer = rendered.lines().last().unwrap().trim_matches('"').trim_end();
            assert!(
                footer.is_empty() || ends.iter().any(|e| footer.ends_with(e)),
                "{name} at {width} columns: the footer ends mid-entry: {footer:?}"
            );
        }
        let footer = render(app, (80, 24)).lines().last().unwrap().to_owned();
        if *name != "help" && *name != "full view" {
            assert!(footer.contains(" ?  all keys  q  quit"), "{name}: {footer}");
        }
    }
}

#[test]
fn help_pages_with_pgdn_and_pgup() {
    let mut app = scene().app;
    key(&mut app, KeyCode::Char('?'));
    // Help is 76 wide at 80 columns, from column 2; its text from column 3.
    let top = inside(&render(&app, (80, 24)), 3, 77);
    let first_text = 2; // the row under the modal's top border
    assert!(top[first_text].starts_with("Everywhere"), "{top:#?}");
    key(&mut app, KeyCode::PageDown);
    let paged = inside(&render(&app, (80, 24)), 3, 77);
    // A page is the 20 rows help shows, less one kept for context.
    assert_eq!(
        paged[first_text],
        top[first_text + 19],
        "PgDn moves a page:\n{paged:#?}"
    );
    key(&mut app, KeyCode::PageUp);
    let back = inside(&render(&app, (80, 24)), 3, 77);
    assert_eq!(back, top, "PgUp comes back to the top");
    key(&mut app, KeyCode::End);
    let end = render(&app, (80, 24));
    let last_section = tether_console::tui::keys::HELP_ORDER.last().unwrap().title();
    assert!(end.contains(last_section), "End shows the last section:\n{end}");
    for _ in 0..50 {
        key(&mut app, KeyCode::PageDown);
    }
    assert!(
        render(&app, (80, 24)).contains(last_section),
        "PgDn stops at the last page, never scrolling into nothing"
    );
    assert_eq!(KeyContext::Help.title(), "Help");
}

#[test]
fn a_long_wrapped_line_is_read_page_by_page_in_the_full_view() {
    let mut s = scene().with_batch();
    // One line of 2,000 four-character words (not JSON, so shown as sent):
    // 76 columns hold 19 of them, so each screen row holds whole words.
    let words: Vec<String> = (0..2000).map(|i| format!("t{i:03x}")).collect();
    s.prompt("call_4", "save_note", &words.concat(), None, 60_000);
    key(&mut s.app, KeyCode::Char('v'));
    let mut seen = std::collections::HashSet::new();
    let mut pages = 0;
    loop {
        let rendered = render(&s.app, (80, 24));
        let rows = inside(&rendered, 2, 78);
        for row in &rows[2..22] {
            for word in row.as_bytes().chunks(4) {
                seen.insert(String::from_utf8_lossy(word).into_owned());
            }
        }
        if words.iter().all(|w| seen.contains(w)) || pages > 20 {
            break;
        }
        key(&mut s.app, KeyCode::PageDown);
        pages += 1;
    }
    let missing: Vec<&String> = words.iter().filter(|w| !seen.contains(*w)).collect();
    assert!(
        missing.is_empty(),
        "{} words never shown after {pages} pages, from {:?}",
        missing.len(),
        missing.first()
    );
    // 2,000 words at 19 a row are 106 rows: six pages of 19 new rows.
    assert_eq!(pages, 5, "each PgDn shows the next page of the line");
    let rendered = render(&s.app, (80, 24));
    assert!(
        rendered.contains("(rows 96-106 of 106)"),
        "the title says where in the line:\n{rendered}"
    );
    key(&mut s.app, KeyCode::Home);
    assert!(render(&s.app, (80, 24)).contains("t000t001t002"));
}
