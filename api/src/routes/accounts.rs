use std::fmt;

use std::net::IpAddr;

use actix_web::http::StatusCode;
use actix_web::{delete, post, web, HttpRequest, HttpResponse};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use utoipa::{IntoParams, ToSchema};

use crate::accounts::Accounts;
use crate::auth::{self, AuthUser, ClientAddress, Revoke};
use crate::codes::ProblemCode;
use crate::config::Settings;
use crate::error::{ApiError, Problem};
use crate::password;
use crate::rates::Rates;
use crate::routes::problems::{Authenticated, JsonBody, ServiceUnavailable, TooManyRequests};
use crate::routes::sessions::{open_session, SessionDto};
use crate::routes::shared::{AccountDto, Username};
use crate::table_service::TableService;
use crate::throttle::LoginThrottle;
use crate::watchers::Watchers;
use store::accounts::{Account, Role};
use store::StoreError;

/// A new password: 8 to 256 characters. Never printed.
#[derive(Clone)]
pub struct NewPassword(String);

impl NewPassword {
    pub const MIN_CHARS: usize = 8;
    pub const MAX_CHARS: usize = 256;

    pub fn parse(raw: &str) -> Result<Self, ApiError> {
        let n = raw.chars().count();
        if (Self::MIN_CHARS..=Self::MAX_CHARS).contains(&n) {
            Ok(Self(raw.to_owned()))
        } else {
            Err(ApiError::Validation {
                code: ProblemCode::InvalidPassword,
                detail: format!(
                    "a password has {} to {} characters",
                    Self::MIN_CHARS,
                    Self::MAX_CHARS
                ),
            })
        }
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for NewPassword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NewPassword(<redacted>)")
    }
}

/// Registration request.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"username": "alice", "password": "correct horse battery"}))]
pub struct NewAccount {
    /// 3 to 32 of `A-Z a-z 0-9 _ -`; unique case-insensitively.
    #[schema(min_length = 3, max_length = 32, pattern = "^[A-Za-z0-9_-]{3,32}$")]
    pub username: String,
    /// 8 to 256 characters.
    #[schema(format = Password, min_length = 8, max_length = 256)]
    pub password: String,
}

impl fmt::Debug for NewAccount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NewAccount")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// Hashes a password on a blocking thread, in turn ([`password::in_turn`]).
pub async fn hash_password(password: NewPassword) -> Result<String, ApiError> {
    password::in_turn(move || password::hash(password.expose()))
        .await?
        .map_err(|e| ApiError::internal(e.to_string()))
}

/// Creates an account with a role (also used by `huit admin create`).
pub async fn register(
    pool: &PgPool,
    username: &str,
    password: &str,
    role: Role,
    rates: Option<(&Rates, Option<IpAddr>)>,
) -> Result<Account, ApiError> {
    let username = Username::chosen(username)?;
    let password = NewPassword::parse(password)?;
    // Counted once the request is valid: only accounts about to be made.
    if let Some((rates, address)) = rates {
        rates.sign_up(address)?;
    }
    let phc = hash_password(password).await?;
    Ok(store::accounts::insert(pool, username.as_str(), &phc, role).await?)
}

/// Register a player account.
///
/// At most `HUIT_SIGN_UPS_PER_MINUTE` accounts per client address per
/// minute (429 `too_many_requests` beyond).
#[utoipa::path(
    tag = "accounts",
    security(()),
    request_body = NewAccount,
    responses(
        (status = 201, description = "The account was created", body = AccountDto),
        (status = 409, description = "`username_taken` (case-insensitively)", body = Problem, content_type = "application/problem+json"),
        JsonBody,
        (status = 422, description = "`invalid_username`, `invalid_password` or `invalid_body`", body = Problem, content_type = "application/problem+json"),
        TooManyRequests,
        ServiceUnavailable,
    )
)]
#[post("/accounts")]
#[tracing::instrument(skip_all, fields(username = %body.username))]
pub async fn create_account(
    pool: web::Data<PgPool>,
    rates: web::Data<Rates>,
    ClientAddress(address): ClientAddress,
    body: web::Json<NewAccount>,
) -> Result<HttpResponse, ApiError> {
    let account = register(
        pool.get_ref(),
        &body.username,
        &body.password,
        Role::Player,
        Some((&rates, address)),
    )
    .await?;
    tracing::info!(account_id = %account.id, "account created");
    Ok(HttpResponse::Created()
        .insert_header((actix_web::http::header::LOCATION, "/v1/me"))
        .json(AccountDto::from(account)))
}

/// `DELETE /v1/me`: the password again (a guest, who has none, sends
/// `{}`).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"password": "correct horse battery"}))]
pub struct DeleteAccount {
    /// The account's password; absent for a guest.
    #[schema(format = Password)]
    pub password: Option<String>,
}

impl fmt::Debug for DeleteAccount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DeleteAccount(<redacted>)")
    }
}

/// A deletion asked: when the account will be erased.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"erase_at": "2025-02-07T18:04:05.123456Z"}))]
pub struct Deletion {
    /// Until then, a log-in cancels the deletion.
    pub erase_at: DateTime<Utc>,
}

/// Delete the caller's account (Apple's and Google's in-app deletion).
///
/// Every session is revoked at once (this token too), the account's
/// running games are resigned (the server plays its seats out) and its
/// waiting seats freed; it is erased at `erase_at`,
/// `HUIT_ERASE_GRACE_SECS` later (7 days; 0: now). Logging in before then
/// cancels the deletion. Erasing forgets the name, the password, the
/// sessions, the feed and the statistics; the games stay, their seats
/// shown as an erased player's, every log still verifying. The password
/// checks go through the log-in throttle.
#[utoipa::path(
    tag = "accounts",
    request_body = DeleteAccount,
    responses(
        (status = 202, description = "Deletion asked; erased at `erase_at`", body = Deletion),
        (status = 401, description = "`unauthorized`, or `wrong_password` (the password missing or not the account's)", body = Problem, content_type = "application/problem+json"),
        JsonBody,
        (status = 422, description = "`invalid_body`", body = Problem, content_type = "application/problem+json"),
        TooManyRequests,
        ServiceUnavailable,
    )
)]
#[delete("/me")]
#[tracing::instrument(skip_all, fields(account_id = %user.account.id))]
pub async fn delete_me(
    pool: web::Data<PgPool>,
    throttle: web::Data<LoginThrottle>,
    accounts: web::Data<Accounts>,
    watchers: web::Data<Watchers>,
    ClientAddress(address): ClientAddress,
    user: AuthUser,
    body: web::Json<DeleteAccount>,
) -> Result<HttpResponse, ApiError> {
    if user.account.role != Role::Guest {
        let password = body.password.as_deref().unwrap_or_default();
        confirm_password(&pool, &throttle, &user, password, address).await?;
    }
    let erase_at = accounts.delete(user.account.id).await?;
    watchers.end_session(user.session_id);
    Ok(HttpResponse::Accepted().json(Deletion { erase_at }))
}

/// Checks the caller's password, asked again, through the log-in
/// throttle: 429 past its limits, 401 `wrong_password` when it is not the
/// account's (a guest has none: nothing is).
pub async fn confirm_password(
    pool: &PgPool,
    throttle: &LoginThrottle,
    user: &AuthUser,
    password: &str,
    address: Option<IpAddr>,
) -> Result<(), ApiError> {
    let key = user.account.username.to_ascii_lowercase();
    if let Err(wait) = throttle.check(&key, address) {
        return Err(ApiError::too_many_requests(
            "too many wrong passwords for this account or address",
            wait,
        ));
    }
    let phc = store::accounts::password_hash(pool, user.account.id).await?;
    let password = password.to_owned();
    let ok = match phc {
        Some(phc) => password::in_turn(move || password::verify(&password, &phc))
            .await?
            .map_err(|e| ApiError::internal(e.to_string()))?,
        None => false,
    };
    if !ok {
        throttle.record_failure(&key, address);
        return Err(ApiError::WrongPassword);
    }
    throttle.record_success(&key, address);
    Ok(())
}

/// `POST /v1/me/password`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"current_password": "correct horse battery", "new_password": "battery staple horse"}))]
pub struct PasswordChange {
    #[schema(format = Password)]
    pub current_password: String,
    /// 8 to 256 characters.
    #[schema(format = Password, min_length = 8, max_length = 256)]
    pub new_password: String,
}

impl fmt::Debug for PasswordChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PasswordChange(<redacted>)")
    }
}

/// Change the caller's password: every other session is revoked, at once
/// in every server process (this one stays). Throttled like log-ins.
#[utoipa::path(
    tag = "accounts",
    request_body = PasswordChange,
    responses(
        (status = 204, description = "Changed; the other sessions are revoked"),
        (status = 401, description = "`unauthorized`, or `wrong_password` (`current_password` is not the account's)", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: a guest has no password (`POST /v1/me/upgrade` gives one)", body = Problem, content_type = "application/problem+json"),
        JsonBody,
        (status = 422, description = "`invalid_password` (the new one) or `invalid_body`", body = Problem, content_type = "application/problem+json"),
        TooManyRequests,
        ServiceUnavailable,
    )
)]
#[post("/me/password")]
#[tracing::instrument(skip_all, fields(account_id = %user.account.id))]
pub async fn change_password(
    pool: web::Data<PgPool>,
    throttle: web::Data<LoginThrottle>,
    tables: web::Data<TableService>,
    watchers: web::Data<Watchers>,
    ClientAddress(address): ClientAddress,
    user: AuthUser,
    body: web::Json<PasswordChange>,
) -> Result<HttpResponse, ApiError> {
    if user.account.role == Role::Guest {
        return Err(ApiError::Forbidden(
            "a guest has no password: POST /v1/me/upgrade gives one".into(),
        ));
    }
    let new = NewPassword::parse(&body.new_password)?;
    confirm_password(&pool, &throttle, &user, &body.current_password, address).await?;
    let phc = hash_password(new).await?;
    store::accounts::set_password_hash(pool.get_ref(), user.account.id, &phc).await?;
    let others = auth::revoke_sessions(
        pool.get_ref(),
        tables.log(),
        user.account.id,
        Revoke::AllBut(user.session_id),
    )
    .await?;
    for session in others {
        watchers.end_session(session);
    }
    tracing::info!("password changed");
    Ok(HttpResponse::NoContent().finish())
}

/// Play without signing up: a guest account (a generated name, no
/// password) and its session. A guest plays every unrated way (quick play,
/// private tables, rematches, bots; a game with a guest is not rated),
/// becomes a player with `POST /v1/me/upgrade`, and is erased once unused
/// for `HUIT_GUEST_IDLE_SECS` (30 days; each use of its token moves its
/// expiry that far on). At most `HUIT_GUESTS_PER_MINUTE` per address.
#[utoipa::path(
    tag = "accounts",
    security(()),
    responses(
        (status = 201, description = "A guest and its session", body = SessionDto),
        TooManyRequests,
        ServiceUnavailable,
    )
)]
#[post("/guests")]
#[tracing::instrument(skip_all)]
pub async fn create_guest(
    pool: web::Data<PgPool>,
    settings: web::Data<Settings>,
    rates: web::Data<Rates>,
    ClientAddress(address): ClientAddress,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    rates.guest(address)?;
    let mut attempts = 0;
    let account = loop {
        attempts += 1;
        match store::accounts::insert_guest(pool.get_ref(), Username::guest().as_str()).await {
            Err(StoreError::UsernameTaken) if attempts < 3 => continue,
            made => break made?,
        }
    };
    tracing::info!(account_id = %account.id, "guest created");
    let session = open_session(&pool, &settings, account, &req).await?;
    Ok(HttpResponse::Created().json(session))
}

/// A guest becomes a player: the same account (its id, tables, history),
/// under a name and password of its own. Its games as a guest stay
/// unrated.
#[utoipa::path(
    tag = "accounts",
    request_body = NewAccount,
    responses(
        (status = 200, description = "The account, now a player's", body = AccountDto),
        (status = 409, description = "`not_a_guest` (the caller has a password already) or `username_taken`", body = Problem, content_type = "application/problem+json"),
        JsonBody,
        (status = 422, description = "`invalid_username`, `invalid_password` or `invalid_body`", body = Problem, content_type = "application/problem+json"),
        Authenticated,
    )
)]
#[post("/me/upgrade")]
#[tracing::instrument(skip_all, fields(account_id = %user.account.id, username = %body.username))]
pub async fn upgrade_guest(
    pool: web::Data<PgPool>,
    tables: web::Data<TableService>,
    user: AuthUser,
    body: web::Json<NewAccount>,
) -> Result<HttpResponse, ApiError> {
    let not_a_guest = || ApiError::Problem {
        status: StatusCode::CONFLICT,
        code: ProblemCode::NotAGuest,
        detail: "only a guest is upgraded; this account is a player's already".into(),
    };
    if user.account.role != Role::Guest {
        return Err(not_a_guest());
    }
    let username = Username::chosen(&body.username)?;
    let phc = hash_password(NewPassword::parse(&body.password)?).await?;
    let mut tx = pool.begin().await?;
    let account = store::accounts::upgrade(&mut *tx, user.account.id, username.as_str(), &phc)
        .await?
        .ok_or_else(not_a_guest)?;
    // Its name shows anew at every table, in every process.
    tables.log().announce_account(&mut tx, account.id).await?;
    tx.commit().await?;
    tables.log().account_changed();
    tracing::info!("guest upgraded");
    Ok(HttpResponse::Ok().json(AccountDto::from(account)))
}

/// An account's id, in the path.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct AccountPath {
    /// The account's id.
    pub id: String,
}

/// Admins: erase an account now (a verdict, a request by mail), recorded
/// as the admin's action. What goes and what stays is `DELETE /v1/me`'s.
#[utoipa::path(
    tag = "admin",
    params(AccountPath),
    responses(
        (status = 204, description = "Erased"),
        (status = 403, description = "`forbidden`: administrators only", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`: no such account (or erased already)", body = Problem, content_type = "application/problem+json"),
        Authenticated,
    )
)]
#[delete("/admin/accounts/{id}")]
#[tracing::instrument(skip_all, fields(admin = %user.account.id, account_id = %path.id))]
pub async fn erase_account(
    accounts: web::Data<Accounts>,
    user: AuthUser,
    path: web::Path<AccountPath>,
) -> Result<HttpResponse, ApiError> {
    user.require_admin()?;
    let id = path
        .id
        .parse()
        .map_err(|_| ApiError::NotFound("no such account".into()))?;
    accounts.erase_by_admin(user.account.id, id).await?;
    Ok(HttpResponse::NoContent().finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames() {
        for ok in ["abc", "Alice_B-2", &"x".repeat(32)] {
            assert!(Username::parse(ok).is_ok(), "{ok}");
        }
        for bad in ["ab", "a b", "émile", "al.ice", &"x".repeat(33), ""] {
            assert!(Username::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn passwords_count_characters_not_bytes() {
        assert!(NewPassword::parse("1234567").is_err());
        assert!(NewPassword::parse("12345678").is_ok());
        assert!(NewPassword::parse(&"é".repeat(256)).is_ok());
        assert!(NewPassword::parse(&"é".repeat(257)).is_err());
        assert_eq!(
            format!("{:?}", NewPassword::parse("secret123").unwrap()),
            "NewPassword(<redacted>)"
        );
    }
}
