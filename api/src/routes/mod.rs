//! Thin handlers: authenticate, parse, call the store, answer. Each carries
//! `#[utoipa::path]`; [`configure`] registers them so the OpenAPI document is
//! collected from the router itself.

use actix_web::{web, HttpRequest, HttpResponse};
use utoipa::openapi::OpenApi;
use utoipa_actix_web::service_config::ServiceConfig;

use crate::error::ApiError;

pub mod accounts;
pub mod devices;
pub mod disputes;
pub mod health;
pub mod history;
pub mod integer;
pub mod me;
pub mod players;
pub mod problems;
pub mod pushes;
pub mod sanctions;
pub mod sessions;
pub mod shared;
pub mod tables;
pub mod webhooks;

/// Every documented route. A request's path is tried against the routes
/// in this order (a pattern with `{id}` costs a regex match), so the routes
/// of a game in play come first. The OpenAPI document sorts its paths.
pub fn configure(cfg: &mut ServiceConfig<'_>) {
    cfg.service(health::healthz).service(
        utoipa_actix_web::scope("/v1")
            .service(tables::play::get_view)
            .service(tables::play::post_move)
            .service(tables::play::get_events)
            .service(tables::play::stream_view)
            .service(accounts::create_account)
            .service(accounts::create_guest)
            .service(accounts::delete_me)
            .service(accounts::upgrade_guest)
            .service(accounts::change_password)
            .service(accounts::erase_account)
            .service(sanctions::sanction_account)
            .service(sanctions::lift_sanction)
            .service(sanctions::admin_account)
            .service(sessions::create_session)
            .service(sessions::delete_current_session)
            .service(sessions::my_sessions)
            .service(sessions::revoke_my_session)
            .service(me::get_me)
            .service(me::export_me)
            .service(devices::register_device)
            .service(devices::my_devices)
            .service(devices::drop_device)
            .service(me::my_tables)
            .service(me::my_feed)
            .service(me::stream_feed)
            .service(history::list_rounds)
            .service(history::replay_round)
            .service(history::export_log)
            .service(history::stream_events)
            .service(history::audit_table)
            .service(disputes::file_dispute)
            .service(disputes::my_disputes)
            .service(disputes::admin_disputes)
            .service(disputes::admin_dispute)
            .service(disputes::resolve_dispute)
            .service(disputes::preview_correction)
            .service(webhooks::deliveries)
            .service(webhooks::resume_webhooks)
            .service(webhooks::retry_delivery)
            .service(pushes::pushes)
            .service(pushes::retry_push)
            .service(players::player_profile)
            .service(players::leaderboard)
            .service(tables::lobby::list_rulesets)
            .service(tables::lobby::create_table)
            .service(tables::lobby::list_tables)
            .service(tables::lobby::get_table)
            .service(tables::commands::join_table)
            .service(tables::commands::leave_table)
            .service(tables::commands::start_table)
            .service(tables::commands::seat_bot)
            .service(tables::commands::resign)
            .service(tables::commands::abort)
            .service(tables::commands::come_back)
            .service(tables::finding::quickplay)
            .service(tables::finding::join_invited)
            .service(tables::finding::renew_invite)
            .service(tables::finding::rematch),
    );
}

/// The default service: 405 with `Allow` when the path exists with other
/// methods, else 404, both as problem+json.
pub async fn fallback(
    req: HttpRequest,
    doc: Option<web::Data<OpenApi>>,
) -> Result<HttpResponse, ApiError> {
    if req.resource_map().has_resource(req.path()) {
        let allow = doc
            .and_then(|doc| allowed_methods(&doc, req.path()))
            // The undocumented resources (`/openapi.json`, `/docs`) are
            // read-only.
            .unwrap_or_else(|| "GET".to_owned());
        Err(ApiError::MethodNotAllowed { allow })
    } else {
        Err(ApiError::NotFound(format!("no resource at {}", req.path())))
    }
}

/// The methods the document lists for the path template matching `path`
/// (`{name}` matches any one segment), as an `Allow` value.
pub fn allowed_methods(doc: &OpenApi, path: &str) -> Option<String> {
    let segments: Vec<&str> = path.split('/').collect();
    let (_, item) = doc.paths.paths.iter().find(|(template, _)| {
        let t: Vec<&str> = template.split('/').collect();
        t.len() == segments.len()
            && t.iter()
                .zip(&segments)
                .all(|(t, s)| (t.starts_with('{') && !s.is_empty()) || t == s)
    })?;
    let methods: Vec<&str> = [
        ("GET", &item.get),
        ("POST", &item.post),
        ("PUT", &item.put),
        ("PATCH", &item.patch),
        ("DELETE", &item.delete),
    ]
    .into_iter()
    .filter(|(_, op)| op.is_some())
    .map(|(m, _)| m)
    .collect();
    (!methods.is_empty()).then(|| methods.join(", "))
}
