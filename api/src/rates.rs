//! Rate limits on what costs the server to create: accounts and guests
//! (per client address), sessions and tables (per account); and on the public reads
//! that need no account (per client address). Each is a token bucket
//! (GCRA, the `governor` crate): N per minute, and at most N at once after
//! a quiet minute. Past it, 429 `too_many_requests` with `Retry-After`.
//! Counted per process, like the log-in throttle.
//!
//! Only requests that would create something count: a malformed sign-up
//! or table, or a wrong password, costs no quota (wrong passwords have the
//! log-in throttle), so nobody can spend another person's quota.

use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU32, Ordering};

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use uuid::Uuid;

use crate::service_error::ServiceError;

/// One bucket per key, or none at all (a limit of 0).
#[derive(Debug)]
struct Limit<K: Hash + Eq + Clone> {
    limiter: Option<DefaultKeyedRateLimiter<K>>,
    checks: AtomicU32,
    /// Said in the 429's detail: "too many {what}".
    what: &'static str,
}

/// Forgotten buckets (full again) are swept after this many checks, so that
/// the keys kept stay about those of the last minute.
const SWEEP_EVERY: u32 = 1024;

impl<K: Hash + Eq + Clone> Limit<K> {
    fn per_minute(n: u32, what: &'static str) -> Self {
        Self {
            limiter: NonZeroU32::new(n).map(|n| RateLimiter::keyed(Quota::per_minute(n))),
            checks: AtomicU32::new(0),
            what,
        }
    }

    /// Takes one from `key`'s bucket, or says how long to wait.
    fn take(&self, key: &K) -> Result<(), ServiceError> {
        let Some(limiter) = &self.limiter else {
            return Ok(());
        };
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            limiter.retain_recent();
        }
        limiter.check_key(key).map_err(|not_until| {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            ServiceError::too_many_requests(
                format!("too many {}; try again later", self.what),
                wait,
            )
        })
    }
}

/// Exports of one account's data per minute (`GET /v1/me/export`).
const EXPORTS_PER_MINUTE: u32 = 6;

/// The limits, per minute; 0 turns one off.
#[derive(Debug, Clone, Copy)]
pub struct RateLimits {
    pub sign_ups_per_address: u32,
    pub guests_per_address: u32,
    pub log_ins_per_account: u32,
    pub tables_per_account: u32,
    pub public_reads_per_address: u32,
}

/// Shared by every worker of a process.
#[derive(Debug)]
pub struct Rates {
    sign_ups: Limit<Option<IpAddr>>,
    guests: Limit<Option<IpAddr>>,
    log_ins: Limit<Uuid>,
    tables: Limit<Uuid>,
    exports: Limit<Uuid>,
    public_reads: Limit<Option<IpAddr>>,
}

impl Rates {
    pub fn new(limits: RateLimits) -> Self {
        Self {
            sign_ups: Limit::per_minute(limits.sign_ups_per_address, "accounts from this address"),
            guests: Limit::per_minute(limits.guests_per_address, "guests from this address"),
            log_ins: Limit::per_minute(limits.log_ins_per_account, "log-ins for this account"),
            tables: Limit::per_minute(limits.tables_per_account, "tables for this account"),
            exports: Limit::per_minute(EXPORTS_PER_MINUTE, "exports of this account"),
            public_reads: Limit::per_minute(
                limits.public_reads_per_address,
                "public reads from this address",
            ),
        }
    }

    /// An account about to be created from `address`.
    pub fn sign_up(&self, address: Option<IpAddr>) -> Result<(), ServiceError> {
        self.sign_ups.take(&address)
    }

    /// A guest about to be created from `address`.
    pub fn guest(&self, address: Option<IpAddr>) -> Result<(), ServiceError> {
        self.guests.take(&address)
    }

    /// A session about to be opened for `account` (its password checked).
    pub fn log_in(&self, account: Uuid) -> Result<(), ServiceError> {
        self.log_ins.take(&account)
    }

    /// A table about to be created by `account`.
    pub fn table(&self, account: Uuid) -> Result<(), ServiceError> {
        self.tables.take(&account)
    }

    /// An export of `account`'s data about to be made (it reads all of it).
    pub fn export(&self, account: Uuid) -> Result<(), ServiceError> {
        self.exports.take(&account)
    }

    /// A public page (a profile, a leaderboard) read from `address`.
    pub fn public_read(&self, address: Option<IpAddr>) -> Result<(), ServiceError> {
        self.public_reads.take(&address)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::ProblemCode;

    fn rates(n: u32) -> Rates {
        Rates::new(RateLimits {
            sign_ups_per_address: n,
            guests_per_address: n,
            log_ins_per_account: n,
            tables_per_account: n,
            public_reads_per_address: n,
        })
    }

    #[test]
    fn a_burst_of_n_then_429_with_retry_after() {
        let rates = rates(3);
        let me = Uuid::new_v4();
        for _ in 0..3 {
            rates.table(me).unwrap();
        }
        match rates.table(me) {
            Err(ServiceError::Limited {
                code, retry_after, ..
            }) => {
                assert_eq!(code, ProblemCode::TooManyRequests);
                // One token comes back every 20 s.
                let secs = retry_after.as_secs_f64();
                assert!(secs > 0.0 && secs <= 20.0, "{secs}");
            }
            other => panic!("expected 429, got {other:?}"),
        }
        // Other accounts and other kinds keep their own buckets.
        rates.table(Uuid::new_v4()).unwrap();
        rates.log_in(me).unwrap();
    }

    #[test]
    fn zero_is_no_limit() {
        let rates = rates(0);
        for _ in 0..10_000 {
            rates.sign_up(None).unwrap();
        }
    }
}
