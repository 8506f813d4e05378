use actix_web::{get, HttpResponse};

use crate::auth::AuthUser;
use crate::error::ApiError;
use crate::routes::problems::Authenticated;
use crate::routes::shared::AccountDto;

/// The caller's account.
#[utoipa::path(
    tag = "accounts",
    responses(
        (status = 200, description = "The caller's account", body = AccountDto),
        Authenticated,
    )
)]
#[get("/me")]
pub async fn get_me(user: AuthUser) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(AccountDto::from(user.account)))
}
