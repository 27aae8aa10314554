//! The approval prompt's keys: the key table's prompt keys in its order and
//! words (the footer and `?` say the same), and the always line with the
//! narrowest rule it offers.

use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

use super::text;
use crate::tui::app::{AlwaysRule, ApprovalPrompt};
use crate::tui::keys::{self, Action, KeyContext};

/// The key rows, broken to `width` columns between keys, then the always
/// line: with the narrowest rule it offers, or, `compact`, without (the
/// chooser `a` opens shows every rule before one is added).
pub(super) fn options(prompt: &ApprovalPrompt, width: usize, compact: bool) -> Vec<Line<'static>> {
    let key = |k: &str| Span::styled(format!(" {k} "), Style::default().fg(Color::Black).bg(Color::Gray));
    let narrowest = AlwaysRule::choices_for(prompt)
        .first()
        .map(AlwaysRule::describe)
        .unwrap_or_default();
    let mut always = vec![
        key(keys::shown_for(KeyContext::Prompt, Action::ApproveAlways)),
        Span::raw(" approve always: "),
        Span::styled(crate::sanitize::escape(&narrowest), Style::default().fg(Color::Cyan)),
        Span::raw(" (or a wider rule)"),
    ];
    if crate::sanitize::needs_warning(&narrowest) {
        always.push(Span::raw(" "));
        always.push(text::badge());
    }
    if compact {
        always = vec![
            key(keys::shown_for(KeyContext::Prompt, Action::ApproveAlways)),
            Span::raw(" approve always… (choose the rule)"),
        ];
    }
    // The key table's prompt keys, in its order and words (the footer and
    // help say the same); `a` has its own line, with the rule it offers.
    // A row breaks between keys, never inside one's words.
    let mut rows = vec![Vec::new()];
    let mut used = 0;
    for binding in keys::footer_bindings(KeyContext::Prompt) {
        if binding.action == Action::ApproveAlways || !offered(prompt, binding.action) {
            continue;
        }
        let cost = binding.shown.chars().count() + binding.help.chars().count() + 3;
        if used > 0 && used + 2 + cost > width {
            rows.push(Vec::new());
            used = 0;
        }
        let Some(row) = rows.last_mut() else { break };
        if used > 0 {
            row.push(Span::raw("  "));
            used += 2;
        }
        row.push(key(binding.shown));
        row.push(Span::raw(format!(" {}", binding.help)));
        used += cost;
    }
    let mut lines: Vec<Line<'static>> = rows.into_iter().map(Line::from).collect();
    // A call that needs several approvals is never approved by a rule.
    if offered(prompt, Action::ApproveAlways) {
        lines.push(Line::from(always));
    }
    lines
}

/// Whether a prompt key does anything for this call: `e` only where the
/// front door can carry edited arguments; `a` not on a call that needs
/// several approvals (a rule would let one answerer approve alone).
pub(super) fn offered(prompt: &ApprovalPrompt, action: Action) -> bool {
    match action {
        Action::EditArguments => matches!(prompt.editing, crate::session::events::Editing::Checked(_)),
        Action::ApproveAlways => !prompt.reply.approvers().several(),
        _ => true,
    }
}
