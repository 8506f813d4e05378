//! The admin console (`/admin`), the players' replay pages
//! (`/replay/{table}/{round}`) and their public pages
//! (`/players/{username}`: ratings and last games), and the page where a
//! person deletes their account outside the app (`/account`, Google
//! Play's web link): plain HTML, CSS and ES modules from `api/console/`,
//! compiled into the binary, which use only the public API (the pages load
//! without a token and log in through `/v1/sessions`).

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, HttpResponse};

const INDEX: &str = include_str!("../console/index.html");
const SCRIPT: &str = include_str!("../console/console.js");
const COMMON: &str = include_str!("../console/common.js");
const STYLE: &str = include_str!("../console/console.css");
const ICON: &str = include_str!("../console/favicon.svg");
const ACCOUNT: &str = include_str!("../console/account.html");
const ACCOUNT_SCRIPT: &str = include_str!("../console/account.js");

/// Only this origin's files, no framing, no inline script: what a page
/// that holds an admin's token needs.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self' data:; form-action 'self'; \
     frame-ancestors 'none'; base-uri 'none'";

fn file(content_type: &'static str, body: &'static str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(content_type)
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(POLICY),
        ))
        .insert_header((
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .insert_header((
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-cache")))
        .body(body)
}

async fn index() -> HttpResponse {
    file("text/html; charset=utf-8", INDEX)
}

async fn script() -> HttpResponse {
    file("text/javascript; charset=utf-8", SCRIPT)
}

async fn common() -> HttpResponse {
    file("text/javascript; charset=utf-8", COMMON)
}

async fn account() -> HttpResponse {
    file("text/html; charset=utf-8", ACCOUNT)
}

async fn account_script() -> HttpResponse {
    file("text/javascript; charset=utf-8", ACCOUNT_SCRIPT)
}

async fn style() -> HttpResponse {
    file("text/css; charset=utf-8", STYLE)
}

/// The site's icon: an SVG, also at `/favicon.ico`, where browsers look
/// for it unasked.
async fn icon() -> HttpResponse {
    file("image/svg+xml", ICON)
}

/// The console's routes (not in the OpenAPI document: they are pages, not
/// the API).
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/admin", web::get().to(index))
        .route("/admin/", web::get().to(index))
        .route("/admin/console.js", web::get().to(script))
        .route("/admin/common.js", web::get().to(common))
        .route("/admin/console.css", web::get().to(style))
        .route("/replay/{table}/{round}", web::get().to(index))
        .route("/players/{username}", web::get().to(index))
        .route("/account", web::get().to(account))
        .route("/account/account.js", web::get().to(account_script))
        .route("/favicon.svg", web::get().to(icon))
        .route("/favicon.ico", web::get().to(icon));
}
