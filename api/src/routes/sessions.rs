use std::fmt;
use std::net::IpAddr;

use actix_web::http::header;
use actix_web::{delete, get, post, web, HttpRequest, HttpResponse};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::auth::{self, AuthUser, ClientAddress, Revoke};
use crate::config::Settings;
use crate::error::{ApiError, Problem, SuspendedProblem};
use crate::password;
use crate::rates::Rates;
use crate::routes::problems::{Authenticated, JsonBody, ServiceUnavailable, TooManyRequests};
use crate::routes::shared::{AccountDto, Username};
use crate::table_service::TableService;
use crate::throttle::LoginThrottle;
use crate::watchers::Watchers;
use store::accounts::{Account, Role};

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
    "account": {"id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "username": "alice", "role": "player"},
    "deletion_cancelled": false
}))]
pub struct SessionDto {
    /// 256 random bits as 64 hex digits.
    pub token: String,
    pub expires_at: DateTime<Utc>,
    pub account: AccountDto,
    /// This log-in cancelled the account's pending deletion
    /// (`DELETE /v1/me`).
    pub deletion_cancelled: bool,
}

impl fmt::Debug for SessionDto {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionDto")
            .field("token", &"<redacted>")
            .field("expires_at", &self.expires_at)
            .field("account", &self.account)
            .field("deletion_cancelled", &self.deletion_cancelled)
            .finish()
    }
}

/// Log in: trade a username and password for a bearer token.
///
/// 429 `too_many_requests` after too many failed log-ins for this username
/// or address, or too many log-ins for this account in a minute; 403
/// `account_suspended` (the right password) while an admin's sanction
/// stands, saying `until` when (null: a ban).
#[utoipa::path(
    tag = "sessions",
    security(()),
    request_body = Credentials,
    responses(
        (status = 201, description = "Logged in", body = SessionDto),
        (status = 401, description = "`invalid_credentials`", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "`account_suspended`: until `until` (null: banned)", body = SuspendedProblem, content_type = "application/problem+json"),
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
    req: HttpRequest,
    body: web::Json<Credentials>,
) -> Result<HttpResponse, ApiError> {
    let account = check_credentials(&pool, &throttle, body.into_inner(), address).await?;
    rates.log_in(account.id)?;
    let id = account.id;
    // A suspended account's log-in cancels nothing: refused first.
    let mut session = open_session(&pool, &settings, account, &req).await?;
    session.deletion_cancelled = store::accounts::cancel_erasure(pool.get_ref(), id).await?;
    if session.deletion_cancelled {
        tracing::info!(account_id = %id, "account deletion cancelled by a log-in");
    }
    Ok(HttpResponse::Created().json(session))
}

/// The `User-Agent` a session is listed with: its first
/// [`USER_AGENT_MAX_CHARS`] characters, when it is text.
fn user_agent(req: &HttpRequest) -> Option<String> {
    let value = req.headers().get(header::USER_AGENT)?.to_str().ok()?;
    Some(value.chars().take(USER_AGENT_MAX_CHARS).collect())
}

/// The longest `User-Agent` kept (the column's limit).
const USER_AGENT_MAX_CHARS: usize = 256;

/// A new session of `account`: its token (shown once), expiring after
/// `HUIT_TOKEN_TTL_SECS` (a guest's after `HUIT_GUEST_IDLE_SECS` unused:
/// each use moves it on, see [`auth`]); 403 `account_suspended` while a
/// sanction stands (checked in the session's transaction, ordered with
/// the sanction's by the account's row: [`store::sanctions`]).
pub async fn open_session(
    pool: &PgPool,
    settings: &Settings,
    account: Account,
    req: &HttpRequest,
) -> Result<SessionDto, ApiError> {
    let token = auth::new_token();
    let ttl = match account.role {
        Role::Guest => settings.guest_idle(),
        Role::Player | Role::Admin => settings.token_ttl(),
    };
    let ttl = chrono::Duration::from_std(ttl).map_err(|e| ApiError::internal(e.to_string()))?;
    let expires_at = store::chain::truncate_at(Utc::now() + ttl);
    let mut tx = pool.begin().await?;
    if let Some(sanction) = store::sanctions::refusing_log_in(&mut tx, account.id).await? {
        tracing::info!(account_id = %account.id, sanction_id = %sanction.id, "log-in refused: sanctioned");
        return Err(ApiError::AccountSuspended {
            until: sanction.until,
        });
    }
    let session_id = store::sessions::insert(
        &mut *tx,
        &auth::token_hash(&token),
        account.id,
        expires_at,
        user_agent(req).as_deref(),
    )
    .await?;
    tx.commit().await?;
    tracing::info!(account_id = %account.id, %session_id, "logged in");
    Ok(SessionDto {
        token,
        expires_at,
        account: account.into(),
        deletion_cancelled: false,
    })
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

/// What logging out also does.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LogOutQuery {
    /// A phone of the caller's registered for push (`POST
    /// /v1/me/devices`) that stops receiving pushes with this log-out
    /// (nothing when it is not the caller's).
    pub device_id: Option<Uuid>,
}

/// Log out: revoke the token used for this request, and drop the phone
/// `device_id` names, if any.
#[utoipa::path(
    tag = "sessions",
    params(LogOutQuery),
    responses(
        (status = 204, description = "The token is revoked"),
        (status = 400, description = "`invalid_query`: `device_id` is not an id", body = Problem, content_type = "application/problem+json"),
        Authenticated,
    )
)]
#[delete("/sessions/current")]
pub async fn delete_current_session(
    pool: web::Data<PgPool>,
    tables: web::Data<TableService>,
    watchers: web::Data<Watchers>,
    user: AuthUser,
    query: web::Query<LogOutQuery>,
) -> Result<HttpResponse, ApiError> {
    if let Some(device) = query.device_id {
        store::devices::drop_one(pool.get_ref(), user.account.id, device).await?;
    }
    auth::revoke_session(pool.get_ref(), tables.log(), &user).await?;
    // Its long polls and streams in this process end now (in others,
    // within `watchers::REVOCATION_CHECK`).
    watchers.end_session(user.session_id);
    Ok(HttpResponse::NoContent().finish())
}

/// The example of a session, in [`SessionInfo`]'s schema and the list's.
fn session_example() -> serde_json::Value {
    serde_json::json!({
        "id": "3c1a5d2f-4e8b-4a6c-9f2e-3d4c5b6a7e8f",
        "created_at": "2025-01-31T18:04:05.123456Z",
        "last_used_at": "2025-02-01T09:00:00.000000Z",
        "expires_at": "2025-03-02T18:04:05.123456Z",
        "user_agent": "Huit/1.4 (iPhone; iOS 18.1)",
        "current": true
    })
}

/// One of the caller's sessions (a device they are logged in on).
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = session_example)]
pub struct SessionInfo {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    /// When it was last used, to the minute.
    pub last_used_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// The `User-Agent` it logged in with (its first 256 characters);
    /// null: none sent.
    #[schema(required = true)]
    pub user_agent: Option<String>,
    /// The session of this very request.
    pub current: bool,
}

impl SessionInfo {
    /// A session as listed to the caller of session `current`.
    pub fn of(r: store::sessions::SessionRow, current: Uuid) -> Self {
        Self {
            current: r.id == current,
            id: r.id,
            created_at: r.created_at,
            last_used_at: r.last_used_at,
            expires_at: r.expires_at,
            user_agent: r.user_agent,
        }
    }
}

/// The caller's sessions.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"sessions": [session_example()]}))]
pub struct Sessions {
    /// The active ones (neither revoked nor expired), the last used first;
    /// at most 100.
    pub sessions: Vec<SessionInfo>,
}

/// The most sessions listed.
const SESSIONS_LISTED: i64 = 100;

/// The devices the caller is logged in on: their active sessions.
#[utoipa::path(
    tag = "sessions",
    responses(
        (status = 200, description = "The caller's active sessions", body = Sessions),
        Authenticated,
    )
)]
#[get("/me/sessions")]
pub async fn my_sessions(
    pool: web::Data<PgPool>,
    user: AuthUser,
) -> Result<HttpResponse, ApiError> {
    let rows = store::sessions::active_of(pool.get_ref(), user.account.id, SESSIONS_LISTED).await?;
    let sessions = rows
        .into_iter()
        .map(|r| SessionInfo::of(r, user.session_id))
        .collect();
    Ok(HttpResponse::Ok().json(Sessions { sessions }))
}

/// A session's id, in the path.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct SessionPath {
    /// The session's id (`GET /v1/me/sessions`).
    pub id: String,
}

/// Log a device out: revoke one of the caller's sessions, at once in every
/// server process (its long polls and streams end too).
#[utoipa::path(
    tag = "sessions",
    params(SessionPath),
    responses(
        (status = 204, description = "The session is revoked"),
        (status = 404, description = "`not_found`: the caller has no such active session", body = Problem, content_type = "application/problem+json"),
        Authenticated,
    )
)]
#[delete("/me/sessions/{id}")]
pub async fn revoke_my_session(
    pool: web::Data<PgPool>,
    tables: web::Data<TableService>,
    watchers: web::Data<Watchers>,
    user: AuthUser,
    path: web::Path<SessionPath>,
) -> Result<HttpResponse, ApiError> {
    let not_found = || ApiError::NotFound("no such session".into());
    let session_id: Uuid = path.id.parse().map_err(|_| not_found())?;
    let revoked = auth::revoke_sessions(
        pool.get_ref(),
        tables.log(),
        user.account.id,
        Revoke::One(session_id),
    )
    .await?;
    if revoked.is_empty() {
        return Err(not_found());
    }
    watchers.end_session(session_id);
    Ok(HttpResponse::NoContent().finish())
}
