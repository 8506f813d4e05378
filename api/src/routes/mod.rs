//! Thin handlers: authenticate, parse, call the store, answer. Each carries
//! `#[utoipa::path]`; [`configure`] registers them so the OpenAPI document is
//! collected from the router itself.

use actix_web::{HttpRequest, HttpResponse};
use utoipa_actix_web::service_config::ServiceConfig;

use crate::error::ApiError;

pub mod accounts;
pub mod health;
pub mod history;
pub mod me;
pub mod sessions;
pub mod tables;

/// Every documented route.
pub fn configure(cfg: &mut ServiceConfig<'_>) {
    cfg.service(health::healthz).service(
        utoipa_actix_web::scope("/v1")
            .service(accounts::create_account)
            .service(sessions::create_session)
            .service(sessions::delete_current_session)
            .service(me::get_me)
            .service(history::list_rounds)
            .service(history::replay_round)
            .service(history::export_log)
            .service(history::stream_events)
            .service(history::audit_table)
            .service(tables::list_rulesets)
            .service(tables::create_table)
            .service(tables::list_tables)
            .service(tables::get_table)
            .service(tables::join_table)
            .service(tables::leave_table)
            .service(tables::start_table)
            .service(tables::get_view)
            .service(tables::post_move)
            .service(tables::get_events),
    );
}

/// The default service: 405 when the path exists with other methods, else
/// 404, both as problem+json.
pub async fn fallback(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    if req.resource_map().has_resource(req.path()) {
        Err(ApiError::MethodNotAllowed)
    } else {
        Err(ApiError::NotFound(format!("no resource at {}", req.path())))
    }
}
