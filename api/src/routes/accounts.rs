use std::fmt;

use std::net::IpAddr;

use actix_web::{post, web, HttpResponse};
use serde::Deserialize;
use sqlx::PgPool;
use utoipa::ToSchema;

use crate::auth::ClientAddress;
use crate::codes::ProblemCode;
use crate::error::{ApiError, Problem};
use crate::password;
use crate::rates::Rates;
use crate::routes::problems::{JsonBody, ServiceUnavailable, TooManyRequests};
use crate::routes::shared::{AccountDto, Username};
use store::accounts::{Account, Role};

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
    let username = Username::parse(username)?;
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
