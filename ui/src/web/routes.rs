//! The page's routes: the queue, one approval (a notification's link), the
//! pairing link, answers, live updates, and the two static files. Every
//! response carries a strict Content-Security-Policy (no inline script),
//! `frame-ancestors 'none'` and `Referrer-Policy: no-referrer`.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use super::devices::Device;
use super::page::{self, Banner};
use super::{Refusal, Verdict, Web};

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; \
                   form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The page's router over `web`.
pub fn router(web: Arc<Web>) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/approval/{id}", get(approval))
        .route("/pair/{token}", get(pair_page))
        .route("/pair", post(pair))
        .route("/answer", post(answer))
        .route("/events", get(events))
        .route("/static/app.js", get(script))
        .route("/static/style.css", get(style))
        .layer(axum::middleware::map_response(protect))
        .with_state(web)
}

async fn protect(mut response: Response) -> Response {
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CSP),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::CACHE_CONTROL, "no-store"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

fn html(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

impl Web {
    fn cookie_name(&self) -> &'static str {
        // `__Host-` binds it to this origin, over TLS only.
        if self.secure {
            "__Host-tether_device"
        } else {
            "tether_device"
        }
    }

    /// The paired device the request's cookie names. A request without
    /// the cookie gives no secret and is refused at once; a wrong cookie is
    /// answered late ([`super::devices::Devices::device`]).
    async fn device_of(&self, headers: &HeaderMap) -> Option<Device> {
        let wanted = self.cookie_name();
        let secret = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(name, _)| *name == wanted)?
            .1;
        self.devices.device(secret).await
    }

    /// Whether a POST comes from this page. A browser says where a request
    /// comes from in `Sec-Fetch-Site`, which no page can set; under
    /// `Referrer-Policy: no-referrer` its `Origin` on a form's POST is
    /// `null`, so `Origin` decides only for a browser that sends no
    /// `Sec-Fetch-Site`. A request that says neither is refused.
    fn same_origin(&self, headers: &HeaderMap) -> bool {
        let site = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok());
        let origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
        match (site, origin) {
            (Some(site), _) if site != "same-origin" => false,
            (Some(_), Some(origin)) => origin == self.base || origin == "null",
            (Some(_), None) => true,
            (None, Some(origin)) => origin == self.base,
            (None, None) => false,
        }
    }

    fn not_paired() -> Response {
        html(
            StatusCode::UNAUTHORIZED,
            page::message("Tether — not paired", &Refusal::NotPaired.to_string()),
        )
    }

    fn queue_page(&self, device: &Device, banner: Option<&Banner>, status: StatusCode) -> Response {
        let version = *self.watch().borrow();
        let waiting = self.waiting();
        let body = page::queue(&waiting, device, &|s| self.field(s, device), banner, version);
        html(status, body)
    }
}

async fn index(State(web): State<Arc<Web>>, headers: HeaderMap) -> Response {
    match web.device_of(&headers).await {
        Some(device) => web.queue_page(&device, None, StatusCode::OK),
        None => Web::not_paired(),
    }
}

/// A notification's link: it names a call and grants nothing.
async fn approval(State(web): State<Arc<Web>>, Path(id): Path<u64>, headers: HeaderMap) -> Response {
    let Some(device) = web.device_of(&headers).await else {
        return Web::not_paired();
    };
    if web.waiting().iter().any(|s| s.prompt.id == id) {
        let mut response = StatusCode::SEE_OTHER.into_response();
        if let Ok(to) = HeaderValue::from_str(&format!("/#approval-{id}")) {
            response.headers_mut().insert(header::LOCATION, to);
        }
        return response;
    }
    let how = web.ended(id).unwrap_or_else(|| "it is not in the queue".to_owned());
    let banner = Banner::Refused(format!("this call no longer waits ({how})"));
    web.queue_page(&device, Some(&banner), StatusCode::OK)
}

async fn pair_page(State(web): State<Arc<Web>>, Path(token): Path<String>) -> Response {
    match web.devices.check_link(&token).await {
        Ok(()) => html(StatusCode::OK, page::pair_form(&token)),
        Err(refusal) => html(
            StatusCode::FORBIDDEN,
            page::message("Tether — pairing refused", &refusal.to_string()),
        ),
    }
}

fn form(body: &Bytes) -> Vec<(String, String)> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

fn value<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

async fn pair(State(web): State<Arc<Web>>, headers: HeaderMap, body: Bytes) -> Response {
    if !web.same_origin(&headers) {
        return html(
            StatusCode::FORBIDDEN,
            page::message("Tether — refused", &Refusal::CrossOrigin.to_string()),
        );
    }
    let fields = form(&body);
    let token = value(&fields, "token").unwrap_or_default();
    let name = value(&fields, "name").unwrap_or_default();
    match web.devices.pair(token, name).await {
        Ok((device, secret)) => {
            web.record(
                "web/pair",
                &device,
                format!("web device {} paired: it can answer approvals", device.name),
            );
            let secure = if web.secure { "; Secure" } else { "" };
            let cookie = format!(
                "{}={secret}; Path=/; HttpOnly; SameSite=Strict; Max-Age=2592000{secure}",
                web.cookie_name()
            );
            let mut response = StatusCode::SEE_OTHER.into_response();
            if let Ok(cookie) = HeaderValue::from_str(&cookie) {
                response.headers_mut().insert(header::SET_COOKIE, cookie);
            }
            response
                .headers_mut()
                .insert(header::LOCATION, HeaderValue::from_static("/"));
            response
        }
        Err(refusal) => html(
            StatusCode::FORBIDDEN,
            page::message("Tether — pairing refused", &refusal.to_string()),
        ),
    }
}

async fn answer(State(web): State<Arc<Web>>, headers: HeaderMap, body: Bytes) -> Response {
    let Some(device) = web.device_of(&headers).await else {
        return Web::not_paired();
    };
    if !web.same_origin(&headers) {
        let banner = Banner::Refused(Refusal::CrossOrigin.to_string());
        return web.queue_page(&device, Some(&banner), StatusCode::FORBIDDEN);
    }
    let fields = form(&body);
    let bound: Vec<String> = fields
        .iter()
        .filter(|(n, _)| n == "b")
        .map(|(_, v)| v.clone())
        .collect();
    let reason = value(&fields, "reason").map(str::trim).filter(|r| !r.is_empty());
    let verdict = match value(&fields, "decision") {
        Some("approve") => Verdict::Approve,
        Some("reject") => Verdict::Reject {
            reason: reason.map(|r| r.replace("\r\n", "\n")),
        },
        _ => {
            let banner = Banner::Refused("refused: the answer said neither Approve nor Reject".to_owned());
            return web.queue_page(&device, Some(&banner), StatusCode::BAD_REQUEST);
        }
    };
    let ids: Vec<u64> = bound.iter().filter_map(|b| b.split('.').next()?.parse().ok()).collect();
    // Each answered call, and (a call that needs several approvals) how
    // many this approval makes, when it is not the last.
    let names: Vec<(String, Option<(usize, u8)>)> = web
        .waiting()
        .iter()
        .filter(|s| ids.contains(&s.prompt.id))
        .map(|s| {
            let name = format!(
                "{} ({})",
                crate::sanitize::escape(&s.prompt.tool),
                crate::sanitize::escape(&s.prompt.call_id)
            );
            let approvers = s.prompt.reply.approvers();
            let made = approvers.given.len() + 1;
            (
                name,
                (made < usize::from(approvers.needed)).then_some((made, approvers.needed)),
            )
        })
        .collect();
    match web.answer(&device, &bound, &verdict) {
        Ok(_) => {
            web.settled(&ids, std::time::Duration::from_secs(1)).await;
            let banner = Banner::Done(said(&verdict, &names));
            web.queue_page(&device, Some(&banner), StatusCode::OK)
        }
        Err(Refusal::NotPaired) => Web::not_paired(),
        Err(refusal) => {
            let status = match refusal {
                Refusal::NotOurs | Refusal::CrossOrigin => StatusCode::FORBIDDEN,
                _ => StatusCode::CONFLICT,
            };
            web.queue_page(&device, Some(&Banner::Refused(refusal.to_string())), status)
        }
    }
}

/// What the banner says of an answer taken for `names`: an approval that
/// is not the last a call needs says the call still waits.
fn said(verdict: &Verdict, names: &[(String, Option<(usize, u8)>)]) -> String {
    let word = match verdict {
        Verdict::Approve => "Approved",
        Verdict::Reject { reason: Some(_) } => "Rejected (the model reads your reason)",
        Verdict::Reject { reason: None } => "Rejected",
    };
    let approve = matches!(verdict, Verdict::Approve);
    let done: Vec<&str> = names
        .iter()
        .filter(|(_, counted)| !approve || counted.is_none())
        .map(|(name, _)| name.as_str())
        .collect();
    let mut said: Vec<String> = names
        .iter()
        .filter(|_| approve)
        .filter_map(|(name, counted)| {
            counted
                .map(|(made, needed)| format!("Approval {made} of {needed} counted: {name} waits for another approver"))
        })
        .collect();
    if !done.is_empty() || said.is_empty() {
        said.insert(0, format!("{word}: {}", done.join(", ")));
    }
    said.join("; ")
}

/// Live updates: `queue` with the version whenever the queue changes,
/// `revoked` (and the end) once the device is revoked.
async fn events(State(web): State<Arc<Web>>, headers: HeaderMap) -> Response {
    let Some(device) = web.device_of(&headers).await else {
        return Web::not_paired();
    };
    let start = (Some(web.watch()), web, device.id, true);
    let stream = futures::stream::unfold(start, |(rx, web, id, first)| async move {
        let mut rx = rx?;
        if !first && rx.changed().await.is_err() {
            return None;
        }
        if !web.devices.is_paired(id) {
            return Some((
                Ok::<_, Infallible>(Event::default().event("revoked").data("revoked")),
                (None, web, id, false),
            ));
        }
        let version = *rx.borrow_and_update();
        Some((
            Ok(Event::default().event("queue").data(version.to_string())),
            (Some(rx), web, id, false),
        ))
    });
    Sse::new(stream).keep_alive(KeepAlive::default()).into_response()
}

async fn script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        include_str!("assets/app.js"),
    )
        .into_response()
}

async fn style() -> Response {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        include_str!("assets/style.css"),
    )
        .into_response()
}
