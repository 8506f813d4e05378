use std::fmt;
use std::net::IpAddr;

use actix_web::{delete, post, web, HttpResponse};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use utoipa::ToSchema;

use crate::auth::{self, AuthUser, ClientAddress};
use crate::config::Settings;
use crate::error::{ApiError, Problem};
use crate::password;
use crate::rates::Rates;
use crate::routes::problems::{Authenticated, JsonBody, ServiceUnavailable, TooManyRequests};
use crate::routes::shared::{AccountDto, Username};
use crate::throttle::LoginThrottle;
use crate::watchers::Watchers;
use store::accounts::Account;

/// Log-in request.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"username": "alice", "password": "correct horse battery"}))]
pub struct Credentials {
    pub username: String,
    #[schema(format = Password)]
    pub password: String,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// A new session. The token is shown once; send it as
/// `Authorization: Bearer <token>`.
#[derive(Serialize, ToSchema)]
#[schema(example = json!({
    "token": "9f2c4e1a7b3d5f60819a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70",
    "expires_at": "2025-03-02T18:04:05.123456Z",
    "account": {"id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "username": "alice", "role": "player"}
}))]
pub struct SessionDto {
    /// 256 random bits as 64 hex digits.
    pub token: String,
    pub expires_at: DateTime<Utc>,
    pub account: AccountDto,
}

impl fmt::Debug for SessionDto {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionDto")
            .field("token", &"<redacted>")
            .field("expires_at", &self.expires_at)
            .field("account", &self.account)
            .finish()
    }
}

/// Log in: trade a username and password for a bearer token.
///
/// 429 `too_many_requests` after too many failed log-ins for this username
/// or address, or too many log-ins for this account in a minute.
#[utoipa::path(
    tag = "sessions",
    security(()),
    request_body = Credentials,
    responses(
        (status = 201, description = "Logged in", body = SessionDto),
        (status = 401, description = "`invalid_credentials`", body = Problem, content_type = "application/problem+json"),
        JsonBody,
        (status = 422, description = "`invalid_body`", body = Problem, content_type = "application/problem+json"),
        TooManyRequests,
        ServiceUnavailable,
    )
)]
#[post("/sessions")]
#[tracing::instrument(skip_all, fields(username = %body.username.escape_debug()))]
pub async fn create_session(
    pool: web::Data<PgPool>,
    settings: web::Data<Settings>,
    throttle: web::Data<LoginThrottle>,
    rates: web::Data<Rates>,
    ClientAddress(address): ClientAddress,
    body: web::Json<Credentials>,
) -> Result<HttpResponse, ApiError> {
    let account = check_credentials(&pool, &throttle, body.into_inner(), address).await?;
    rates.log_in(account.id)?;
    let token = auth::new_token();
    let ttl = chrono::Duration::from_std(settings.token_ttl())
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let expires_at = store::chain::truncate_at(Utc::now() + ttl);
    let session_id = store::sessions::insert(
        pool.get_ref(),
        &auth::token_hash(&token),
        account.id,
        expires_at,
    )
    .await?;
    tracing::info!(account_id = %account.id, %session_id, "logged in");
    Ok(HttpResponse::Created().json(SessionDto {
        token,
        expires_at,
        account: account.into(),
    }))
}

/// The account these credentials open, through the log-in throttle: 429
/// without checking the password past its limits, 401 for a wrong name or
/// password (the same answer for both; an unknown username costs a hash
/// too).
async fn check_credentials(
    pool: &PgPool,
    throttle: &LoginThrottle,
    Credentials { username, password }: Credentials,
    address: Option<IpAddr>,
) -> Result<Account, ApiError> {
    // One spelling: a name that is not a username (non-ASCII, NUL, too
    // long, …) is a wrong log-in, refused without a query; all such names
    // share one throttling key.
    let name = Username::parse(&username).ok();
    let key = name.as_ref().map(Username::key).unwrap_or_default();
    if let Err(wait) = throttle.check(&key, address) {
        tracing::warn!(?address, "log-in throttled");
        return Err(ApiError::too_many_requests(
            "too many failed log-ins for this username or address",
            wait,
        ));
    }
    let Some(name) = name else {
        throttle.record_failure(&key, address);
        return Err(ApiError::InvalidCredentials);
    };
    let found = store::accounts::find_with_password_hash(pool, &name.key()).await?;
    let account = match found {
        Some((account, phc)) => {
            let ok = password::in_turn(move || password::verify(&password, &phc))
                .await?
                .map_err(|e| ApiError::internal(e.to_string()))?;
            ok.then_some(account)
        }
        None => {
            password::in_turn(move || password::verify_dummy(&password)).await?;
            None
        }
    };
    let Some(account) = account else {
        throttle.record_failure(&key, address);
        tracing::info!(?address, "log-in failed");
        return Err(ApiError::InvalidCredentials);
    };
    throttle.record_success(&key, address);
    Ok(account)
}

/// Log out: revoke the token used for this request.
#[utoipa::path(
    tag = "sessions",
    responses(
        (status = 204, description = "The token is revoked"),
        Authenticated,
    )
)]
#[delete("/sessions/current")]
pub async fn delete_current_session(
    pool: web::Data<PgPool>,
    watchers: web::Data<Watchers>,
    user: AuthUser,
) -> Result<HttpResponse, ApiError> {
    auth::revoke_session(pool.get_ref(), user.session_id).await?;
    // Its long polls and streams in this process end now (in others,
    // within `watchers::REVOCATION_CHECK`).
    watchers.end_session(user.session_id);
    Ok(HttpResponse::NoContent().finish())
}
