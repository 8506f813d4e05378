use actix_web::{get, HttpResponse};

use super::accounts::AccountDto;
use crate::auth::AuthUser;
use crate::error::{ApiError, Problem};

/// The caller's account.
#[utoipa::path(
    tag = "accounts",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The caller's account", body = AccountDto),
        (status = 401, description = "`unauthorized`", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "`service_unavailable`", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/me")]
#[tracing::instrument(skip_all, fields(account_id = %user.account.id))]
pub async fn get_me(user: AuthUser) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(AccountDto::from(user.account)))
}
