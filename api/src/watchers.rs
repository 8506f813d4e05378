//! The open long polls and streams of this process ("watches"), and their
//! limits: at most so many per account, per client address and in all, so
//! that no client can take the server's descriptors; the next one is
//! refused (429 `too_many_streams`, or 503 when the process as a whole is
//! full) rather than an older one closed, so that a client sees at once why.
//!
//! What they follow is what push skips (docs/API.md "Push to phones": no
//! push while the player follows that table, or their feed, nor within
//! [`WATCH_GRACE`] after): when this server pushes, every process keeps a
//! row per account and thing followed in `watching`, valid until a time
//! that it pushes on, every [`WATCH_REFRESH`], while a watch is open, and
//! writes at once when a watch opens on something it has not covered for
//! [`WATCH_GRACE`] ahead (a new one, or one left a while ago). A player who
//! long-polls again and again thus costs a write every [`WATCH_REFRESH`],
//! not one a poll.
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
pub use store::pushes::Following;

/// How often the sessions of open watches are checked in the database
/// (revocations through other processes, the README's revocation delay).
pub const REVOCATION_CHECK: Duration = Duration::from_secs(1);

/// How long after a watch closes its player still counts as following
/// (the contract's 10 s).
pub const WATCH_GRACE: Duration = Duration::from_secs(10);
/// How often a process pushes on the `watching` rows of its open watches.
pub const WATCH_REFRESH: Duration = Duration::from_secs(3);

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
    /// What is followed (when this server pushes) → the watches open on
    /// it, and until when its `watching` row is written.
    following: HashMap<(Uuid, Following), Followed>,
}

#[derive(Debug, Clone, Copy)]
struct Followed {
    open: usize,
    covered_until: DateTime<Utc>,
}

#[derive(Debug)]
struct Inner {
    state: Mutex<State>,
    limits: WatchLimits,
    /// Where what is followed is written, when this server pushes.
    pushes: Option<PgPool>,
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
    following: Following,
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

/// `now` plus `d`.
fn after(now: DateTime<Utc>, d: Duration) -> DateTime<Utc> {
    now + chrono::Duration::from_std(d).unwrap_or_default()
}

impl Watchers {
    /// The watches of a process; what they follow is written to `pushes`'s
    /// `watching` when there is one (this server pushes).
    pub fn new(limits: WatchLimits, pushes: Option<PgPool>) -> Self {
        Self {
            inner: Arc::new(Inner {
                state: Mutex::default(),
                limits,
                pushes,
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

    /// Opens a watch for `user` from `address` on `following`, or says why
    /// not; and whether what it follows is to be written now (when this
    /// server pushes and its row does not cover [`WATCH_GRACE`] ahead).
    fn open(
        &self,
        user: &AuthUser,
        address: Option<IpAddr>,
        following: Following,
    ) -> Result<(Watch, bool), ApiError> {
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
        let mut to_write = false;
        if self.inner.pushes.is_some() {
            let now = Utc::now();
            let followed = state
                .following
                .entry((account, following))
                .or_insert(Followed {
                    open: 0,
                    covered_until: now,
                });
            followed.open += 1;
            if followed.covered_until < after(now, WATCH_GRACE) {
                followed.covered_until = after(now, WATCH_GRACE + WATCH_REFRESH);
                to_write = true;
            }
        }
        let watch = Watch {
            inner: self.inner.clone(),
            account,
            address,
            session: user.session_id,
            following,
            ended,
            expires_at: user.expires_at,
        };
        Ok((watch, to_write))
    }

    /// Writes that `followed` are followed, until [`WATCH_GRACE`] and
    /// [`WATCH_REFRESH`] from now: a failure is logged (at worst, a push
    /// to a player who was looking).
    async fn write_followed(&self, followed: &[(Uuid, Following)]) {
        let Some(pool) = &self.inner.pushes else {
            return;
        };
        let until = after(Utc::now(), WATCH_GRACE + WATCH_REFRESH);
        if let Err(e) = store::pushes::watch(pool, followed, until).await {
            tracing::warn!(error = %e, "push: what is followed was not written");
        }
    }

    /// Pushes on, every [`WATCH_REFRESH`], the rows of what this process's
    /// open watches follow, forgets what nothing follows any more, and
    /// deletes the rows (of any process) long past.
    pub fn spawn_following(&self) -> Option<tokio::task::JoinHandle<()>> {
        let pool = self.inner.pushes.clone()?;
        let watchers = self.clone();
        Some(tokio::spawn(async move {
            let mut tick = tokio::time::interval(WATCH_REFRESH);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let now = Utc::now();
                let open: Vec<(Uuid, Following)> = {
                    let mut state = watchers.state();
                    state
                        .following
                        .retain(|_, f| f.open > 0 || f.covered_until > now);
                    state
                        .following
                        .iter_mut()
                        .filter(|(_, f)| f.open > 0)
                        .map(|(key, f)| {
                            f.covered_until = after(now, WATCH_GRACE + WATCH_REFRESH);
                            *key
                        })
                        .collect()
                };
                if !open.is_empty() {
                    watchers.write_followed(&open).await;
                }
                let long_past = now - chrono::Duration::minutes(1);
                if let Err(e) = store::pushes::forget_watched(&pool, long_past).await {
                    tracing::debug!(error = %e, "push: old rows of watching kept; next time");
                }
            }
        }))
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
        if let Some(followed) = state.following.get_mut(&(self.account, self.following)) {
            followed.open -= 1;
        }
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
    /// `too_many_streams` past the limits, 503 when the process is full),
    /// following `following` (written before it starts, when it must be).
    pub async fn open(&self, user: &AuthUser, following: Following) -> Result<Watch, ApiError> {
        let (watch, to_write) = self.watchers.open(user, self.address, following)?;
        if to_write {
            self.watchers
                .write_followed(&[(user.account.id, following)])
                .await;
        }
        Ok(watch)
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
