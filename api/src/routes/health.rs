use actix_web::{get, web, HttpResponse};
use serde::Serialize;
use sqlx::PgPool;
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::routes::problems::ServiceUnavailable;

#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"status": "ok"}))]
pub struct Health {
    /// Always `ok` in a 200.
    pub status: String,
}

/// Liveness and readiness: 200 only when the database answers.
#[utoipa::path(
    tag = "health",
    security(()),
    responses(
        (status = 200, description = "The service and its database answer", body = Health),
        ServiceUnavailable,
    )
)]
#[get("/healthz")]
#[tracing::instrument(skip_all)]
pub async fn healthz(pool: web::Data<PgPool>) -> Result<HttpResponse, ApiError> {
    store::ping(pool.get_ref())
        .await
        .map_err(|e| ApiError::ServiceUnavailable(Some(e)))?;
    Ok(HttpResponse::Ok().json(Health {
        status: "ok".into(),
    }))
}
