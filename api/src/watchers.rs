//! The open long polls and streams of this process ("watches"), and their
//! limits: at most so many per account, per client address and in all, so
//! that no client can take the server's descriptors; the next one is
//! refused (429 `too_many_streams`, or 503 when the process as a whole is
//! full) rather than an older one closed, so that a client sees at once why.
//!
//! A watch also ends with its session: at once when the token is revoked
//! through this process, within [`REVOCATION_CHECK`] when it is revoked
//! through another one (a background task asks the database which of the
//! watched sessions ended), and at its expiry.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpRequest};
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use tokio::sync::watch;
use uuid::Uuid;

use crate::auth::{AuthUser, ClientAddress};
use crate::codes::ProblemCode;
use crate::error::ApiError;
use crate::metric_names::WATCHES_OPEN;

/// How often the sessions of open watches are checked in the database
/// (revocations through other processes, the README's revocation delay).
pub const REVOCATION_CHECK: Duration = Duration::from_secs(1);

/// The limits of [`Watchers`].
#[derive(Debug, Clone, Copy)]
pub struct WatchLimits {
    pub per_account: usize,
    pub per_address: usize,
    pub total: usize,
}

#[derive(Debug, Default)]
struct State {
    accounts: HashMap<Uuid, usize>,
    addresses: HashMap<IpAddr, usize>,
    total: usize,
    /// Session id → the signal that ends its watches, and how many use it.
    sessions: HashMap<Uuid, (watch::Sender<bool>, usize)>,
}

#[derive(Debug)]
struct Inner {
    state: Mutex<State>,
    limits: WatchLimits,
}

/// The watches of one process; shared by every worker.
#[derive(Debug, Clone)]
pub struct Watchers {
    inner: Arc<Inner>,
}

/// One open long poll or stream; it counts until dropped.
#[derive(Debug)]
pub struct Watch {
    inner: Arc<Inner>,
    account: Uuid,
    address: Option<IpAddr>,
    session: Uuid,
    ended: watch::Receiver<bool>,
    expires_at: DateTime<Utc>,
}

fn decrement<K: std::hash::Hash + Eq>(map: &mut HashMap<K, usize>, key: &K) {
    if let Some(n) = map.get_mut(key) {
        *n -= 1;
        if *n == 0 {
            map.remove(key);
        }
    }
}

impl Watchers {
    pub fn new(limits: WatchLimits) -> Self {
        Self {
            inner: Arc::new(Inner {
                state: Mutex::default(),
                limits,
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Its gauge, at a scrape: the long polls and streams open now, in
    /// this process.
    pub fn gauge(&self) {
        metrics::gauge!(WATCHES_OPEN).set(self.state().total as f64);
    }

    /// Opens a watch for `user` from `address`, or says why not.
    pub fn open(&self, user: &AuthUser, address: Option<IpAddr>) -> Result<Watch, ApiError> {
        let limits = self.inner.limits;
        let mut state = self.state();
        let account = user.account.id;
        let too_many = |what: &str, limit: usize| ApiError::TooManyRequests {
            code: ProblemCode::TooManyStreams,
            detail: format!(
                "at most {limit} long polls and streams at once {what}; close one first"
            ),
            retry_after_secs: 1,
        };
        if state.total >= limits.total {
            return Err(ApiError::ServiceUnavailable(None));
        }
        if state.accounts.get(&account).copied().unwrap_or(0) >= limits.per_account {
            return Err(too_many("per account", limits.per_account));
        }
        if let Some(ip) = address {
            if state.addresses.get(&ip).copied().unwrap_or(0) >= limits.per_address {
                return Err(too_many("per client address", limits.per_address));
            }
            *state.addresses.entry(ip).or_default() += 1;
        }
        *state.accounts.entry(account).or_default() += 1;
        state.total += 1;
        let (signal, uses) = state
            .sessions
            .entry(user.session_id)
            .or_insert_with(|| (watch::Sender::new(false), 0));
        *uses += 1;
        let ended = signal.subscribe();
        Ok(Watch {
            inner: self.inner.clone(),
            account,
            address,
            session: user.session_id,
            ended,
            expires_at: user.expires_at,
        })
    }

    /// Ends every watch of a session (its token was revoked).
    pub fn end_session(&self, session_id: Uuid) {
        if let Some((signal, _)) = self.state().sessions.get(&session_id) {
            signal.send_replace(true);
        }
    }

    /// Open watches of `account` (for tests and logs).
    pub fn of_account(&self, account: Uuid) -> usize {
        self.state().accounts.get(&account).copied().unwrap_or(0)
    }

    /// Checks, every [`REVOCATION_CHECK`], which watched sessions were
    /// revoked or expired in the database, and ends their watches.
    pub fn spawn_revocation_checks(&self, pool: PgPool) -> tokio::task::JoinHandle<()> {
        let watchers = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(REVOCATION_CHECK);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let open: Vec<Uuid> = watchers.state().sessions.keys().copied().collect();
                if open.is_empty() {
                    continue;
                }
                match store::sessions::ended_among(&pool, &open).await {
                    Ok(ended) => ended.into_iter().for_each(|s| watchers.end_session(s)),
                    Err(e) => tracing::debug!(error = %e, "session check failed; next time"),
                }
            }
        })
    }
}

impl Watch {
    /// Resolves once the watch's session has ended (revoked or expired).
    pub async fn ended(&mut self) {
        let expiry = (self.expires_at - Utc::now()).to_std().unwrap_or_default();
        let revoked = self.ended.wait_for(|ended| *ended);
        tokio::select! {
            _ = revoked => {}
            () = tokio::time::sleep(expiry) => {}
        }
    }

    /// Runs `poll` (a long poll) unless the session ends first: then 401.
    pub async fn unless_ended<T, E: Into<ApiError>>(
        mut self,
        poll: impl std::future::Future<Output = Result<T, E>>,
    ) -> Result<T, ApiError> {
        tokio::select! {
            answer = poll => answer.map_err(Into::into),
            () = self.ended() => Err(ApiError::Unauthorized("the token was revoked or has expired")),
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let mut state = self.inner.state.lock().unwrap_or_else(|p| p.into_inner());
        decrement(&mut state.accounts, &self.account);
        if let Some(ip) = self.address {
            decrement(&mut state.addresses, &ip);
        }
        state.total -= 1;
        if let Some((_, uses)) = state.sessions.get_mut(&self.session) {
            *uses -= 1;
            if *uses == 0 {
                state.sessions.remove(&self.session);
            }
        }
    }
}

/// The caller's way to a place among this process's watches: the watchers
/// and the caller's address, as an extractor.
#[derive(Debug, Clone)]
pub struct WatchSlot {
    watchers: web::Data<Watchers>,
    address: Option<IpAddr>,
}

impl WatchSlot {
    /// A long poll's or stream's place among the caller's open ones (429
    /// `too_many_streams` past the limits, 503 when the process is full).
    pub fn open(&self, user: &AuthUser) -> Result<Watch, ApiError> {
        self.watchers.open(user, self.address)
    }
}

impl FromRequest for WatchSlot {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let watchers = req
            .app_data::<web::Data<Watchers>>()
            .cloned()
            .ok_or_else(|| ApiError::internal("no watchers registered"));
        let address = ClientAddress::from_request(req, payload).into_inner();
        std::future::ready(match (watchers, address) {
            (Ok(watchers), Ok(ClientAddress(address))) => Ok(Self { watchers, address }),
            (Err(e), _) | (_, Err(e)) => Err(e),
        })
    }
}
