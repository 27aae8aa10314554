//! The page's HTML, rendered on the server: what the terminal's prompt
//! shows, each text a model or agent wrote escaped as the terminal escapes
//! it ([`crate::sanitize`]), then for HTML. No inline script or style: the
//! page answers without JavaScript, and `/static/app.js` only adds live
//! updates and the countdown.

use std::fmt::Write as _;

use super::Shown;
use super::devices::Device;

/// Text for HTML: `&`, `<`, `>`, `"` and `'` as entities.
pub fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// What a model or agent wrote, as the terminal shows it, for HTML.
pub fn shown(text: &str) -> String {
    html(&crate::sanitize::escape(text))
}

/// A banner above the queue: what became of the last answer.
pub enum Banner {
    Done(String),
    Refused(String),
}

fn document(title: &str, version: u64, body: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><link rel=\"stylesheet\" href=\"/static/style.css\">\
         <script src=\"/static/app.js\" defer></script></head>\
         <body data-version=\"{version}\">{body}</body></html>\n",
        html(title)
    )
}

/// A page with one message (not paired, a refused pairing, …).
pub fn message(title: &str, text: &str) -> String {
    document(
        title,
        0,
        &format!(
            "<header><h1>Tether</h1></header><main><p class=\"banner refused\" id=\"message\">{}</p></main>",
            html(text)
        ),
    )
}

/// The pairing form a one-time link opens.
pub fn pair_form(token: &str) -> String {
    document(
        "Tether — pair this device",
        0,
        &format!(
            "<header><h1>Tether</h1></header><main><form method=\"post\" action=\"/pair\" class=\"pair\">\
             <p>Pair this browser with the console: it can then answer the console's approvals until it is revoked \
             (<code>tether web revoke NAME</code>) or the console stops.</p>\
             <input type=\"hidden\" name=\"token\" value=\"{}\">\
             <label for=\"name\">Device name</label>\
             <input id=\"name\" name=\"name\" required maxlength=\"32\" autocomplete=\"off\" placeholder=\"phone\">\
             <button type=\"submit\" class=\"approve\" id=\"pair\">Pair</button></form></main>",
            html(token)
        ),
    )
}

/// The queue as `device` sees it: every waiting request in order, each
/// with its place ("1 of 3"), its time left and its answer forms.
pub fn queue(
    waiting: &[Shown],
    device: &Device,
    field: &dyn Fn(&Shown) -> String,
    banner: Option<&Banner>,
    version: u64,
) -> String {
    let mut body = format!(
        "<header><h1>Tether</h1><span class=\"device\">{}</span></header><main>",
        shown(&device.answerer())
    );
    match banner {
        Some(Banner::Done(text)) => {
            let _ = write!(body, "<p class=\"banner done\" id=\"message\">{}</p>", html(text));
        }
        Some(Banner::Refused(text)) => {
            let _ = write!(body, "<p class=\"banner refused\" id=\"message\">{}</p>", html(text));
        }
        None => {}
    }
    if waiting.is_empty() {
        body.push_str("<p class=\"empty\" id=\"empty\">Nothing waits for an answer.</p>");
    }
    let mut grouped: Vec<String> = Vec::new();
    for (at, request) in waiting.iter().enumerate() {
        body.push_str(&card(request, at + 1, waiting.len(), field));
        let session = session_of(request);
        let group: Vec<&Shown> = waiting.iter().filter(|s| session_of(s) == session).collect();
        if group.len() > 1 && !grouped.contains(&session) {
            body.push_str(&group_form(&group, field));
            grouped.push(session);
        }
    }
    body.push_str("</main>");
    let title = match waiting.len() {
        0 => "Tether".to_owned(),
        n => format!("Tether — {n} waiting"),
    };
    document(&title, version, &body)
}

/// The agent session a request belongs to (its group for `Y` / `N`).
fn session_of(request: &Shown) -> String {
    match (&request.prompt.agent, request.prompt.scope_id) {
        (Some(agent), _) => format!("agent {agent}"),
        (None, Some(scope)) => format!("scope {scope}"),
        (None, None) => "global".to_owned(),
    }
}

fn row(out: &mut String, term: &str, value: &str) {
    let _ = write!(out, "<dt>{}</dt><dd>{}</dd>", html(term), shown(value));
}

fn card(request: &Shown, place: usize, of: usize, field: &dyn Fn(&Shown) -> String) -> String {
    let prompt = &request.prompt;
    let left_ms = request.deadline_ms.saturating_sub(super::now_ms());
    // Marked as every screen rings for it.
    let reminded = if request.reminded {
        " <span class=\"reminded\">reminder: still waits</span>"
    } else {
        ""
    };
    let mut out = format!(
        "<section class=\"approval\" id=\"approval-{}\"><p class=\"place\"><span class=\"of\">{place} of {of}</span> \
         <span class=\"left\" data-left-ms=\"{left_ms}\">{}:{:02} left</span>{reminded}</p>\
         <h2><span class=\"tool\">{}</span> <small>call {}</small></h2><dl>",
        prompt.id,
        left_ms / 60_000,
        (left_ms / 1000) % 60,
        shown(&prompt.tool),
        shown(&prompt.call_id),
    );
    row(&mut out, "Agent", prompt.agent.as_deref().unwrap_or("—"));
    row(&mut out, "Scope", &prompt.scope_label);
    if let Some(owner) = &prompt.owner {
        row(&mut out, "Owner", owner);
    }
    if let Some(cwd) = &prompt.cwd {
        row(&mut out, "In", cwd);
    }
    if let Some(subagent) = &prompt.subagent {
        let label = subagent.label();
        row(&mut out, "Via", label.strip_prefix("via ").unwrap_or(&label));
    }
    row(&mut out, "Reason", prompt.reason.as_deref().unwrap_or("(none given)"));
    // The two-person rule: who approved so far, as every screen says it.
    if let Some(line) = prompt.reply.approvers().line() {
        row(&mut out, "Approvals", &line);
    }
    if let Some(rule) = &prompt.anchor {
        row(&mut out, "Asked by", &format!("rule {rule}"));
    }
    out.push_str("</dl>");
    if !prompt.commands.is_empty() {
        out.push_str("<ol class=\"runs\">");
        for line in &prompt.commands {
            let class = if line.ends_with("← no rule allows this") {
                " class=\"uncovered\""
            } else {
                ""
            };
            let _ = write!(out, "<li{class}>{}</li>", shown(line));
        }
        out.push_str("</ol>");
    }
    match &prompt.validation {
        Ok(()) => out.push_str("<p class=\"valid\">✓ arguments validate against the tool's schema</p>"),
        Err(problem) => {
            let _ = write!(out, "<p class=\"invalid\">✗ {}</p>", shown(problem));
        }
    }
    if let Some(veto) = &prompt.guard_veto {
        let _ = write!(
            out,
            "<p class=\"invalid\">⛔ approving will not run it: {} will veto it</p>",
            shown(veto)
        );
    }
    let lines = crate::sanitize::marked_argument_lines(&prompt.arguments);
    out.push_str("<h3>Arguments");
    if crate::sanitize::arguments_need_warning(&lines) {
        out.push_str(" <span class=\"badge\">⚠ control, bidi or zero-width characters are shown as \\u{..}</span>");
    }
    out.push_str("</h3><pre class=\"args\">");
    for line in &lines {
        out.push_str(&html(&line.text));
        out.push('\n');
    }
    let _ = write!(
        out,
        "</pre><form method=\"post\" action=\"/answer\" class=\"answer\">\
         <input type=\"hidden\" name=\"b\" value=\"{}\">\
         <label for=\"reason-{id}\">Reason for a rejection (optional; the model reads it)</label>\
         <textarea id=\"reason-{id}\" name=\"reason\" rows=\"3\"></textarea><div class=\"buttons\">\
         <button type=\"submit\" name=\"decision\" value=\"approve\" class=\"approve\">Approve</button>\
         <button type=\"submit\" name=\"decision\" value=\"reject\" class=\"reject\">Reject</button></div></form></section>",
        html(&field(request)),
        id = prompt.id,
    );
    out
}

/// One answer for every waiting call of a session, fixed when shown (a
/// call that arrives later is never covered), as the terminal's `Y`/`N`.
fn group_form(group: &[&Shown], field: &dyn Fn(&Shown) -> String) -> String {
    let first = group[0];
    let who = first.prompt.agent.as_deref().unwrap_or(&first.prompt.scope_label);
    let mut out = format!(
        "<form method=\"post\" action=\"/answer\" class=\"group\"><p>All {} waiting calls of {}: {}</p>",
        group.len(),
        shown(who),
        group
            .iter()
            .map(|s| format!("{} ({})", shown(&s.prompt.tool), shown(&s.prompt.call_id)))
            .collect::<Vec<_>>()
            .join(", "),
    );
    for request in group {
        let _ = write!(
            out,
            "<input type=\"hidden\" name=\"b\" value=\"{}\">",
            html(&field(request))
        );
    }
    let _ = write!(
        out,
        "<label for=\"group-reason-{id}\">Reason for rejecting them all (optional)</label>\
         <textarea id=\"group-reason-{id}\" name=\"reason\" rows=\"2\"></textarea><div class=\"buttons\">\
         <button type=\"submit\" name=\"decision\" value=\"approve\" class=\"approve\">Approve all {n}</button>\
         <button type=\"submit\" name=\"decision\" value=\"reject\" class=\"reject\">Reject all {n}</button></div></form>",
        id = first.prompt.id,
        n = group.len(),
    );
    out
}
