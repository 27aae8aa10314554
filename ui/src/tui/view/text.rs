//! Text helpers shared by the panes.

use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

use crate::sanitize;

/// JSON arguments as display lines (see [`sanitize::argument_lines`]).
pub fn pretty_arguments(raw: &str) -> Vec<String> {
    sanitize::argument_lines(raw)
}

/// At most `max` lines; when cut, the last line says how many more there are
/// and how to see them, so nothing is ever silently cut.
pub fn clip_lines(lines: &[String], max: usize, hint: &str) -> (Vec<String>, usize) {
    if lines.len() <= max || max == 0 {
        return (lines.to_vec(), 0);
    }
    let keep = max - 1;
    let hidden = lines.len() - keep;
    let mut shown: Vec<String> = lines[..keep].to_vec();
    shown.push(format!("[… {hidden} more lines] {hint}"));
    (shown, hidden)
}

/// Escapes `text` for the screen; the second value says whether anything
/// was escaped (the caller shows a warning badge).
pub fn escaped(text: &str) -> (String, bool) {
    (sanitize::escape(text), sanitize::needs_warning(text))
}

/// The warning badge for escaped text.
pub fn badge() -> Span<'static> {
    Span::styled(" ⚠ escaped ", Style::default().fg(Color::Black).bg(Color::Yellow))
}

/// A label/value line, with the badge when the value was escaped.
pub fn field<'a>(label: &'a str, value: &str) -> Line<'a> {
    let (text, warn) = escaped(value);
    let mut spans = vec![
        Span::styled(format!("{label:<10}"), Style::default().fg(Color::DarkGray)),
        Span::raw(text),
    ];
    if warn {
        spans.push(Span::raw(" "));
        spans.push(badge());
    }
    Line::from(spans)
}

/// Cuts a string to `width` characters, marking the cut with `…`.
pub fn fit(text: &str, width: usize) -> String {
    crate::sanitize::shortened(text, width)
}

/// `1.234s`, `56ms`.
pub fn duration(d: std::time::Duration) -> String {
    if d.as_secs() >= 1 {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// `path` with the user's home directory shown as `~`, as the agent's
/// working directory is named on the prompt and in the detail pane.
pub fn home_relative(path: &str) -> String {
    match std::env::var("HOME") {
        Ok(home) if !home.is_empty() && path.starts_with(&home) && path[home.len()..].starts_with('/') => {
            format!("~{}", &path[home.len()..])
        }
        _ => path.to_owned(),
    }
}
