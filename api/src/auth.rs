//! Bearer-token authentication.
//!
//! A token is 32 random bytes (256 bits) written as 64 lowercase hex
//! digits. Only its SHA-256 (hex) is stored, so a leaked database does not
//! leak usable tokens.
//!
//! [`AuthUser`] looks the session up in the database on every request.
//! [`CachedAuthUser`], for the hot paths of a game (view, moves, events),
//! reuses a lookup for [`SESSION_CACHE_TTL`] while no account changed: an
//! expiry is still checked on every request, and a revocation (a log-out,
//! a session revoked, a password changed, an account deleted) announces
//! the account's change in its transaction, so that every process looks
//! its sessions up again from then on
//! ([`crate::log::hub::CommitHub::accounts_epoch`]); only a session changed
//! in the database by hand waits out the bound.
//!
//! A lookup notes the session's use at most once a minute
//! ([`store::sessions::touch`]): `GET /v1/me/sessions` shows it, and idle
//! guests are found by it.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::ops::Deref;
use std::pin::Pin;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use actix_web::http::header;
use actix_web::{web, FromRequest, HttpRequest};
use chrono::{DateTime, Utc};
use rand::RngCore;
use sha2::{Digest, Sha256};
use sqlx::PgPool;
use uuid::Uuid;

use crate::config::Settings;
use crate::error::ApiError;
use crate::log::Log;
use crate::table_service::{Person, TableService};
use store::accounts::{Account, Role};

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
    /// When the session's token expires.
    pub expires_at: DateTime<Utc>,
}

impl AuthUser {
    /// The caller as a table seats them.
    pub fn person(&self) -> Person {
        Person {
            id: self.account.id,
            guest: self.account.role == Role::Guest,
            client_seed: None,
        }
    }

    /// 403 unless the caller is an admin.
    pub fn require_admin(&self) -> Result<(), ApiError> {
        if self.account.role == Role::Admin {
            Ok(())
        } else {
            Err(ApiError::Forbidden("administrators only".into()))
        }
    }
}

/// The client's address: the peer, or, when `HUIT_TRUST_PROXY` is on, the
/// address the proxy in front appended last to `X-Forwarded-For` (the peer
/// it saw); what comes before it is whatever the client wrote, and is
/// ignored, as is `Forwarded`, which proxies pass through untouched. The
/// peer when there is no such header (a request that did not come through
/// the proxy).
pub fn client_address(req: &HttpRequest, trust_proxy: bool) -> Option<IpAddr> {
    let peer = || req.peer_addr().map(|a| a.ip());
    if !trust_proxy {
        return peer();
    }
    let appended_last = req
        .headers()
        .get_all("x-forwarded-for")
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .last();
    match appended_last {
        Some(raw) => {
            let raw = raw.trim();
            raw.parse::<IpAddr>()
                .ok()
                .or_else(|| raw.parse::<SocketAddr>().ok().map(|s| s.ip()))
        }
        None => peer(),
    }
}

/// [`client_address`] as an extractor, by the process's settings.
#[derive(Debug, Clone, Copy)]
pub struct ClientAddress(pub Option<IpAddr>);

impl FromRequest for ClientAddress {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        let trust_proxy = req
            .app_data::<web::Data<Settings>>()
            .is_some_and(|s| s.trust_proxy);
        std::future::ready(Ok(Self(client_address(req, trust_proxy))))
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

/// How often a session's use is noted at most.
const TOUCH_EVERY: Duration = Duration::from_secs(60);

/// Looks a session up, noting its use (at most once a minute): a guest's
/// then lasts `HUIT_GUEST_IDLE_SECS` more (a guest has no password to log
/// in again with).
async fn lookup(req: &HttpRequest, hash: &str) -> Result<(AuthUser, DateTime<Utc>), ApiError> {
    let pool = req
        .app_data::<web::Data<PgPool>>()
        .cloned()
        .ok_or_else(|| ApiError::internal("no database pool configured"))?;
    let guest_idle = req
        .app_data::<web::Data<Settings>>()
        .map(|s| s.guest_idle())
        .unwrap_or_default();
    let mut session = store::sessions::find_active(pool.get_ref(), hash)
        .await?
        .ok_or(ApiError::Unauthorized("invalid, expired or revoked token"))?;
    let every = chrono::Duration::from_std(TOUCH_EVERY).unwrap_or(chrono::Duration::MAX);
    if session.last_used_at < Utc::now() - every {
        let lasts = (session.account.role == Role::Guest).then_some(guest_idle);
        if let Some(expires_at) =
            store::sessions::touch(pool.get_ref(), session.session_id, TOUCH_EVERY, lasts).await?
        {
            session.expires_at = expires_at;
        }
    }
    crate::telemetry::record_account(session.account.id);
    let user = AuthUser {
        account: session.account,
        session_id: session.session_id,
        expires_at: session.expires_at,
    };
    Ok((user, session.expires_at))
}

impl FromRequest for AuthUser {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        let token = bearer_token(req);
        let req = req.clone();
        Box::pin(async move {
            let (user, _) = lookup(&req, &token_hash(&token?)).await?;
            Ok(user)
        })
    }
}

/// How long [`CachedAuthUser`] trusts a session lookup.
pub const SESSION_CACHE_TTL: Duration = Duration::from_secs(2);

/// Above this many cached sessions, the stale ones are dropped.
const SESSION_CACHE_LIMIT: usize = 8192;

struct CachedSession {
    user: AuthUser,
    expires_at: DateTime<Utc>,
    looked_up: Instant,
    /// The hub's accounts epoch taken before the lookup.
    accounts: u64,
}

/// Sessions recently looked up, by token hash (process-wide: the token
/// hashes of several databases cannot collide).
static SESSIONS: LazyLock<Mutex<HashMap<String, CachedSession>>> = LazyLock::new(Mutex::default);

/// Revokes the caller's session (`false` when it was revoked already);
/// every process forgets it at once (see the module documentation).
pub async fn revoke_session(
    pool: &PgPool,
    log: &Log,
    user: &AuthUser,
) -> Result<bool, sqlx::Error> {
    let revoked = revoke_sessions(pool, log, user.account.id, Revoke::One(user.session_id)).await?;
    Ok(!revoked.is_empty())
}

/// Which of an account's sessions to revoke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revoke {
    /// This one (if it is the account's and active).
    One(Uuid),
    /// Every one but this.
    AllBut(Uuid),
}

/// Revokes sessions of `account`, announcing the account's change in the
/// same transaction, so that every process looks its sessions up again
/// (see the module documentation): the ones revoked.
pub async fn revoke_sessions(
    pool: &PgPool,
    log: &Log,
    account: Uuid,
    which: Revoke,
) -> Result<Vec<Uuid>, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let revoked = match which {
        Revoke::One(id) => store::sessions::revoke_of(&mut *tx, account, id)
            .await?
            .then_some(id)
            .into_iter()
            .collect(),
        Revoke::AllBut(keep) => store::sessions::revoke_all(&mut *tx, account, Some(keep)).await?,
    };
    if !revoked.is_empty() {
        log.announce_account(&mut tx, account).await?;
    }
    tx.commit().await?;
    if !revoked.is_empty() {
        log.account_changed();
    }
    Ok(revoked)
}

/// [`AuthUser`] with the session lookup reused for [`SESSION_CACHE_TTL`]
/// (see the module documentation): the extractor of the requests a player
/// sends many times a second.
#[derive(Debug, Clone)]
pub struct CachedAuthUser(pub AuthUser);

impl Deref for CachedAuthUser {
    type Target = AuthUser;
    fn deref(&self) -> &AuthUser {
        &self.0
    }
}

impl FromRequest for CachedAuthUser {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        let hash = bearer_token(req).map(|t| token_hash(&t));
        // Nothing is cached without a listener to say when accounts change.
        let accounts = req
            .app_data::<web::Data<TableService>>()
            .and_then(|t| t.hub().accounts_epoch());
        let cached = hash.as_ref().ok().zip(accounts).and_then(|(hash, now)| {
            let sessions = SESSIONS.lock().unwrap_or_else(|p| p.into_inner());
            sessions
                .get(hash)
                .filter(|s| {
                    s.accounts == now
                        && s.looked_up.elapsed() < SESSION_CACHE_TTL
                        && s.expires_at > Utc::now()
                })
                .map(|s| s.user.clone())
        });
        let req = req.clone();
        Box::pin(async move {
            if let Some(user) = cached {
                crate::telemetry::record_account(user.account.id);
                return Ok(CachedAuthUser(user));
            }
            let hash = hash?;
            let looked_up = Instant::now();
            let (user, expires_at) = lookup(&req, &hash).await?;
            let Some(accounts) = accounts else {
                return Ok(CachedAuthUser(user));
            };
            let mut sessions = SESSIONS.lock().unwrap_or_else(|p| p.into_inner());
            if sessions.len() >= SESSION_CACHE_LIMIT {
                sessions.retain(|_, s| s.looked_up.elapsed() < SESSION_CACHE_TTL);
            }
            sessions.insert(
                hash,
                CachedSession {
                    user: user.clone(),
                    expires_at,
                    looked_up,
                    accounts,
                },
            );
            Ok(CachedAuthUser(user))
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
