//! Bearer-token authentication.
//!
//! A token is 32 random bytes (256 bits) written as 64 lowercase hex
//! digits. Only its SHA-256 (hex) is stored, so a leaked database does not
//! leak usable tokens.

use std::future::Future;
use std::pin::Pin;

use actix_web::http::header;
use actix_web::{web, FromRequest, HttpRequest};
use rand::RngCore;
use sha2::{Digest, Sha256};
use sqlx::PgPool;
use uuid::Uuid;

use crate::error::ApiError;
use crate::store;
use crate::store::accounts::{Account, Role};

/// A fresh random token.
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// What is stored for a token.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

fn is_well_formed(token: &str) -> bool {
    token.len() == 64
        && token
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The caller, authenticated by `Authorization: Bearer <token>`. Extracting
/// it answers 401 `unauthorized` (with `WWW-Authenticate`) when the token is
/// missing, malformed, unknown, expired or revoked.
#[derive(Debug, Clone)]
pub struct AuthUser {
    pub account: Account,
    pub session_id: Uuid,
}

impl AuthUser {
    /// 403 unless the caller is an admin.
    pub fn require_admin(&self) -> Result<(), ApiError> {
        if self.account.role == Role::Admin {
            Ok(())
        } else {
            Err(ApiError::Forbidden("administrators only".into()))
        }
    }
}

fn bearer_token(req: &HttpRequest) -> Result<String, ApiError> {
    let value = req
        .headers()
        .get(header::AUTHORIZATION)
        .ok_or(ApiError::Unauthorized(
            "an Authorization: Bearer token is required",
        ))?
        .to_str()
        .map_err(|_| ApiError::Unauthorized("malformed Authorization header"))?;
    let (scheme, token) = value
        .split_once(' ')
        .ok_or(ApiError::Unauthorized("malformed Authorization header"))?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(ApiError::Unauthorized(
            "the Authorization scheme must be Bearer",
        ));
    }
    let token = token.trim();
    if !is_well_formed(token) {
        return Err(ApiError::Unauthorized("invalid, expired or revoked token"));
    }
    Ok(token.to_owned())
}

impl FromRequest for AuthUser {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        let token = bearer_token(req);
        let pool = req.app_data::<web::Data<PgPool>>().cloned();
        Box::pin(async move {
            let token = token?;
            let pool = pool.ok_or_else(|| ApiError::internal("no database pool configured"))?;
            let session = store::sessions::find_active(pool.get_ref(), &token_hash(&token))
                .await?
                .ok_or(ApiError::Unauthorized("invalid, expired or revoked token"))?;
            Ok(AuthUser {
                account: session.account,
                session_id: session.session_id,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_256_bit_hex_and_distinct() {
        let a = new_token();
        assert!(is_well_formed(&a));
        assert_ne!(a, new_token());
        assert_eq!(token_hash(&a).len(), 64);
        assert_ne!(token_hash(&a), a);
    }
}
