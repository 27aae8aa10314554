//! The approval prompt: a modal over everything while a call waits for a
//! human. Long arguments are clipped with a visible marker and open in a
//! full view; every field a model or agent wrote is escaped.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph, Widget, Wrap};

use super::text;
use crate::sanitize::ArgumentLine;
use crate::tui::app::{App, ApprovalPrompt, GroupOf, Overlay};

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let Some(prompt) = app.prompts.current() else { return };
    if let Overlay::FullArguments(view) = &app.overlay {
        super::full_arguments::render(prompt, view, area, buf);
        return;
    }
    if let Overlay::Edit(editor) = &app.overlay {
        super::edit::render(prompt, editor, area, buf);
        return;
    }
    let width = area.width.saturating_sub(4).min(100);
    let inner_width = width.saturating_sub(2).max(1) as usize;
    let max_height = area.height.saturating_sub(2);
    let reason_height: u16 = if matches!(app.overlay, Overlay::Reason(_)) {
        6
    } else {
        0
    };

    // The badge here speaks for the arguments alone: every other field
    // above carries its own.
    let argument_lines = crate::sanitize::marked_argument_lines(&prompt.arguments);
    let mut args_head = vec![Span::styled("Arguments", Style::default().add_modifier(Modifier::BOLD))];
    if crate::sanitize::arguments_need_warning(&argument_lines) {
        args_head.push(Span::raw(" "));
        args_head.push(text::badge());
        args_head.push(Span::styled(
            " control, bidi or zero-width characters are shown as \\u{..}",
            Style::default().fg(Color::Yellow),
        ));
    }
    let args_title = Line::from(args_head);
    let head_with = |compact: bool| {
        let mut head = head_lines(prompt, compact);
        head.push(args_title.clone());
        head
    };
    let mut head = head_with(false);
    let tail_lines = |compact: bool| {
        let mut tail = Vec::new();
        if !compact {
            tail.push(queue_line(app));
            tail.push(Line::raw(""));
        }
        tail.extend(super::prompt_keys::options(prompt, inner_width, compact));
        if let Some((of, ids)) = app.head_group() {
            tail.push(group_keys(&of, ids.len(), compact));
        }
        tail
    };
    let mut tail = tail_lines(false);

    // The keys and the exact always-rule sit in a fixed area at the bottom,
    // so nothing above can push them out; the arguments get what is left,
    // one screen row per line, and say what they leave out.
    let fixed_rows = |head: &[Line], tail: &[Line]| {
        wrapped_height(head, inner_width) + wrapped_height(tail, inner_width) + reason_height as usize
    };
    let room_for = |fixed: usize| (max_height as usize).saturating_sub(fixed + 2);
    // A short terminal must still show what is approved: where the
    // arguments would get fewer than `ARGUMENT_ROWS` rows, the prompt
    // drops what the answer does not turn on (who owns the scope, the
    // schema's tick, the queue, which the header counts, and the words the
    // `a` chooser and the `Y`/`N` lists show before they act) before it
    // drops the arguments.
    if room_for(fixed_rows(&head, &tail)) < argument_lines.len().min(ARGUMENT_ROWS) {
        head = head_with(true);
        tail = tail_lines(true);
    }
    let fixed = fixed_rows(&head, &tail);
    let room = room_for(fixed).max(1);
    let args: Vec<Line> = clip_block(&argument_lines, room, inner_width.saturating_sub(2))
        .into_iter()
        .map(|line| {
            let style = match (line.starts_with("[… "), line.contains('⚠')) {
                (true, true) => Style::default()
                    .fg(Color::Black)
                    .bg(Color::Yellow)
                    .add_modifier(Modifier::BOLD),
                (true, false) => Style::default().fg(Color::Yellow),
                _ => Style::default(),
            };
            Line::styled(format!("  {line}"), style)
        })
        .collect();
    let height = ((fixed + args.len() + 2) as u16).min(max_height);
    let modal = super::centered(area, width, height);
    Clear.render(modal, buf);

    let left = prompt.deadline.saturating_duration_since(app.now);
    let countdown = format!(" {}:{:02} left ", left.as_secs() / 60, left.as_secs() % 60);
    let countdown_style = if left.as_secs() < 15 {
        Style::default()
            .fg(Color::White)
            .bg(Color::Red)
            .add_modifier(Modifier::BOLD)
    } else {
        Style::default().fg(Color::Black).bg(Color::Yellow)
    };
    let border = if app.prompt_is_new() {
        Color::Cyan
    } else {
        Color::Yellow
    };
    let block = Block::bordered()
        .border_type(BorderType::Double)
        .border_style(Style::default().fg(border))
        .title(Line::styled(
            format!(" Approval 1 of {} ", app.prompts.len()),
            Style::default().add_modifier(Modifier::BOLD),
        ))
        .title(if app.prompt_is_new() {
            // Answer keys wait until the highlight is gone (`ANSWER_GUARD`).
            Line::styled(
                " ◆ new request ",
                Style::default()
                    .fg(Color::Black)
                    .bg(Color::Cyan)
                    .add_modifier(Modifier::BOLD),
            )
        } else {
            Line::raw("")
        })
        .title(Line::styled(countdown, countdown_style).right_aligned());
    let inner = block.inner(modal);
    block.render(modal, buf);

    let mut lines = head;
    lines.extend(args);
    let [body, keys_area, reason_area] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(wrapped_height(&tail, inner_width) as u16),
        Constraint::Length(reason_height),
    ])
    .areas(inner);
    Paragraph::new(lines).wrap(Wrap { trim: false }).render(body, buf);
    Paragraph::new(tail).wrap(Wrap { trim: false }).render(keys_area, buf);
    if let Overlay::Reason(textarea) = &app.overlay {
        let title = match &app.group_reason {
            Some(group) => format!(
                " Reason for all {} waiting calls {} (Ctrl+S, then Enter rejects them; Esc back) ",
                group.ids.len(),
                group.of.words()
            ),
            None => " Reason for the model (Ctrl+S sends, Esc goes back) ".to_owned(),
        };
        let block = Block::bordered()
            .title(title)
            .border_style(Style::default().fg(Color::Cyan));
        let inside = block.inner(reason_area);
        block.render(reason_area, buf);
        textarea.render(inside, buf);
    }
}

/// The argument rows a short terminal keeps before the prompt's other
/// lines: enough to read a command or a path.
const ARGUMENT_ROWS: usize = 4;

/// The lines above the arguments; `compact` leaves out what an answer
/// does not turn on (who owns the scope, the schema's tick; a schema
/// error stays).
fn head_lines<'a>(prompt: &'a ApprovalPrompt, compact: bool) -> Vec<Line<'a>> {
    let mut head = vec![
        field_pair("Tool", &prompt.tool, "Call", &prompt.call_id),
        text::field("Scope", &prompt.scope_label),
    ];
    if !compact {
        head.push(field_pair(
            "Owner",
            prompt.owner.as_deref().unwrap_or("—"),
            "Agent",
            prompt.agent.as_deref().unwrap_or("—"),
        ));
    }
    head.push(text::field(
        "Reason",
        prompt.reason.as_deref().unwrap_or("(none given)"),
    ));
    if let Some(cwd) = &prompt.cwd {
        head.insert(2, text::field("In", &text::home_relative(cwd)));
    }
    // Which subagent asked: its `rm` is not the main agent's.
    if let Some(subagent) = &prompt.subagent {
        let at = head.len() - 1;
        head.insert(at, text::field("Via", &subagent_label(subagent)));
    }
    // The two-person rule: who approved so far, on every screen.
    if let Some(line) = prompt.reply.approvers().line() {
        head.push(text::field("Approvals", &line));
    }
    for line in &prompt.commands {
        head.push(text::field("Runs", line));
    }
    match &prompt.validation {
        Ok(()) if compact => {}
        Ok(()) => head.push(Line::styled(
            "✓ arguments validate against the tool's schema",
            Style::default().fg(Color::Green),
        )),
        Err(problem) => head.push(badged(
            Line::styled(
                format!("✗ {}", crate::sanitize::escape(problem)),
                Style::default().fg(Color::Red),
            ),
            problem,
        )),
    }
    if let Some(veto) = &prompt.guard_veto {
        head.push(badged(
            Line::styled(
                format!(
                    "⛔ approving will not run it: {} will veto it",
                    crate::sanitize::escape(veto)
                ),
                Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
            ),
            veto,
        ));
    }
    head
}

/// Rows the lines take when word-wrapped at `width` columns: a wrapped line
/// is counted one row generously, since words do not split evenly.
/// A path under the home directory as `~/…`.
fn wrapped_height(lines: &[Line<'_>], width: usize) -> usize {
    lines
        .iter()
        .map(|l| match l.width() {
            w if w <= width => 1,
            w => w.div_ceil(width) + 1,
        })
        .sum()
}

/// The line with the badge after it when `raw`, shown escaped in it, held a
/// hostile character.
fn badged<'a>(mut line: Line<'a>, raw: &str) -> Line<'a> {
    if crate::sanitize::needs_warning(raw) {
        line.spans.push(Span::raw(" "));
        line.spans.push(text::badge());
    }
    line
}

fn field_pair<'a>(l1: &'a str, v1: &str, l2: &'a str, v2: &str) -> Line<'a> {
    let mut first = text::field(l1, v1);
    let second = text::field(l2, v2);
    first.spans.push(Span::raw("   "));
    first.spans.extend(second.spans);
    first
}

/// The requests waiting behind the one on screen: each with its command
/// or first argument (clipped), and the agent session or scope it is from.
fn queue_line(app: &App) -> Line<'static> {
    let next: Vec<(&ApprovalPrompt, String)> = app
        .prompts
        .iter()
        .skip(1)
        .take(4)
        .map(|p| (p, text::fit(&gist(p), 32)))
        .collect();
    if next.is_empty() {
        return Line::styled("No other request is waiting.", Style::default().fg(Color::DarkGray));
    }
    let waiting: Vec<String> = next
        .iter()
        .map(|(p, gist)| {
            let tool = crate::sanitize::escape(&p.tool);
            let from = crate::sanitize::escape(p.agent.as_deref().unwrap_or(&p.scope_label));
            if gist.is_empty() {
                format!("{tool} ({from})")
            } else {
                format!("{tool} `{}` ({from})", crate::sanitize::escape(gist))
            }
        })
        .collect();
    let more = app.prompts.len().saturating_sub(1 + waiting.len());
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    let line = Line::styled(
        format!("Waiting next: {}{tail}", waiting.join(", ")),
        Style::default().fg(Color::Yellow),
    );
    let shown: String = next
        .iter()
        .flat_map(|(p, gist)| {
            [
                p.tool.as_str(),
                p.agent.as_deref().unwrap_or(&p.scope_label),
                gist.as_str(),
            ]
        })
        .collect();
    badged(line, &shown)
}

/// What a waiting call is about, in a few words: a shell tool's command,
/// else its first argument's value (as written; the caller escapes it).
fn gist(prompt: &ApprovalPrompt) -> String {
    let Ok(arguments) = serde_json::from_str::<serde_json::Value>(&prompt.arguments) else {
        return String::new();
    };
    let command = match prompt.command_at.as_deref() {
        Some(pointer) => arguments.pointer(pointer),
        None if crate::shell::is_shell_tool(&prompt.tool) => arguments.get("command").or_else(|| arguments.get("cmd")),
        None => None,
    };
    let value = command.or_else(|| arguments.as_object().and_then(|o| o.values().next()));
    match value {
        Some(serde_json::Value::String(text)) => text.clone(),
        Some(serde_json::Value::Array(words)) if command.is_some() => words
            .iter()
            .map(|w| w.as_str().map_or_else(|| w.to_string(), str::to_owned))
            .collect::<Vec<_>>()
            .join(" "),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// At most `rows` lines, each cut to `width` columns; what is left out (lines
/// below, or the ends of long lines) is named on the last line with the key
/// that shows it, so nothing is ever silently cut, and a hostile character
/// in what is left out is named with its line.
fn clip_block(lines: &[ArgumentLine], rows: usize, width: usize) -> Vec<String> {
    let rows = rows.max(1);
    let width = width.max(2);
    let cut = lines.iter().any(|l| l.text.chars().count() > width);
    let (keep, marker) = if lines.len() <= rows && !(cut && lines.len() == rows) {
        (lines.len(), cut.then(|| "[… long lines cut at the edge]".to_owned()))
    } else {
        let keep = rows - 1;
        (keep, Some(format!("[… {} more lines]", lines.len() - keep)))
    };
    let mut shown: Vec<String> = lines[..keep].iter().map(|l| text::fit(&l.text, width)).collect();
    if let Some(marker) = marker {
        shown.push(match hidden_hostile(lines, keep, width) {
            Some(notice) => format!("{marker} {notice}"),
            None => format!("{marker} v view all"),
        });
    }
    shown
}

/// "⚠ in line 57, v to view" when a hostile character sits where the prompt
/// does not show it: below the `keep` lines shown, or past the edge of a
/// shown line cut at `width` (an escape is at least six characters).
fn hidden_hostile(lines: &[ArgumentLine], keep: usize, width: usize) -> Option<String> {
    let shows_all = |l: &ArgumentLine| l.text.chars().count() <= width;
    let hidden: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(i, l)| match *i < keep {
            true => !shows_all(l) && l.hostile.iter().any(|&c| c + 6 > width - 1),
            false => !l.hostile.is_empty(),
        })
        .map(|(i, _)| i + 1)
        .collect();
    let first = *hidden.first()?;
    Some(match hidden.len() {
        1 => format!("⚠ in line {first}, v to view"),
        n => format!("⚠ in line {first} and {} more, v to view", n - 1),
    })
}

/// `subagent Explore a7f3`, after the field name "Via".
fn subagent_label(subagent: &crate::subagent::Subagent) -> String {
    let label = subagent.label();
    label.strip_prefix("via ").map_or_else(|| label.clone(), str::to_owned)
}

/// `Y` / `N` when other calls of the same agent session (or batch) wait too.
/// `compact`: without the words the lists `Y` and `N` open show anyway.
fn group_keys(of: &GroupOf, waiting: usize, compact: bool) -> Line<'static> {
    let key = |k: &str| Span::styled(format!(" {k} "), Style::default().fg(Color::Black).bg(Color::Gray));
    let (approve, reject) = if compact {
        (format!(" approve all {waiting}…   "), " reject all…")
    } else {
        (
            format!(" approve all {waiting} waiting calls {}   ", of.words()),
            " reject them all (one reason)",
        )
    };
    Line::from(vec![key("Y"), Span::raw(approve), key("N"), Span::raw(reject)])
}
