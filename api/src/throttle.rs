//! Failed-log-in throttling, in memory (per process), after OWASP's
//! Authentication Cheat Sheet ("Account Lockout"): lock out a guesser, not
//! the account's owner. Within a window, at most N failures per (username,
//! client address) and M per address; per username alone (failures from
//! every address) only past a much higher count, and then as growing
//! delays (1 s, 2 s, 4 s, … up to the window) rather than a lock-out, so
//! that nobody can lock another person out with a few requests. Past a
//! limit, log-ins are refused with 429 and `Retry-After`, without checking
//! the password.
//!
//! Usernames are keyed by their one normal form (ASCII lowercase, see
//! `routes::accounts::Username::key`).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    /// One username tried from one address.
    Pair(String, Option<IpAddr>),
    Address(IpAddr),
    /// One username tried from anywhere.
    Username(String),
}

#[derive(Debug, Clone, Copy)]
struct Window {
    started: Instant,
    failures: u32,
    last: Instant,
}

/// The limits of [`LoginThrottle`].
#[derive(Debug, Clone, Copy)]
pub struct LoginLimits {
    /// Failures per (username, address) before a lock-out for the window.
    pub per_pair: u32,
    /// Failures per address (any usernames) before a lock-out.
    pub per_address: u32,
    /// Failures per username (any addresses) before growing delays.
    pub per_username: u32,
    pub window: Duration,
}

/// Shared by every worker of a process.
#[derive(Debug)]
pub struct LoginThrottle {
    windows: Mutex<HashMap<Key, Window>>,
    limits: LoginLimits,
}

/// Failed guesses of invitation codes (`POST /v1/invites/{code}`),
/// throttled like log-ins with the account's id in the username's place:
/// per (account, address) and per address a lock-out, per account growing
/// delays.
#[derive(Debug)]
pub struct InviteThrottle(pub LoginThrottle);

/// Past this many tracked keys, expired windows are swept on each failure.
const SWEEP_ABOVE: usize = 10_000;

impl LoginThrottle {
    pub fn new(limits: LoginLimits) -> Self {
        Self {
            windows: Mutex::new(HashMap::new()),
            limits: LoginLimits {
                per_pair: limits.per_pair.max(1),
                per_address: limits.per_address.max(1),
                per_username: limits.per_username.max(1),
                window: limits.window,
            },
        }
    }

    fn keys(username: &str, address: Option<IpAddr>) -> impl Iterator<Item = Key> {
        [
            Some(Key::Pair(username.to_owned(), address)),
            address.map(Key::Address),
            Some(Key::Username(username.to_owned())),
        ]
        .into_iter()
        .flatten()
    }

    /// How long `key`, with window `w`, must still wait at `now`.
    fn wait(&self, key: &Key, w: &Window, now: Instant) -> Duration {
        let window = self.limits.window;
        let elapsed = now.duration_since(w.started);
        if elapsed >= window {
            return Duration::ZERO;
        }
        match key {
            Key::Pair(..) if w.failures >= self.limits.per_pair => window - elapsed,
            Key::Address(_) if w.failures >= self.limits.per_address => window - elapsed,
            Key::Username(_) if w.failures >= self.limits.per_username => {
                let over = (w.failures - self.limits.per_username).min(30);
                let delay = Duration::from_secs(1u64 << over).min(window);
                delay.saturating_sub(now.duration_since(w.last))
            }
            Key::Pair(..) | Key::Address(_) | Key::Username(_) => Duration::ZERO,
        }
    }

    /// `Err(retry_after)` when this username (normal form) or address must
    /// wait.
    pub fn check(&self, username: &str, address: Option<IpAddr>) -> Result<(), Duration> {
        let now = Instant::now();
        let windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        let wait = Self::keys(username, address)
            .filter_map(|key| windows.get(&key).map(|w| self.wait(&key, w, now)))
            .max()
            .unwrap_or_default();
        if wait.is_zero() {
            Ok(())
        } else {
            Err(wait)
        }
    }

    pub fn record_failure(&self, username: &str, address: Option<IpAddr>) {
        let now = Instant::now();
        let window = self.limits.window;
        let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        if windows.len() > SWEEP_ABOVE {
            windows.retain(|_, w| now.duration_since(w.started) < window);
        }
        for key in Self::keys(username, address) {
            let fresh = Window {
                started: now,
                failures: 0,
                last: now,
            };
            let w = windows.entry(key).or_insert(fresh);
            if now.duration_since(w.started) >= window {
                *w = fresh;
            }
            w.failures = w.failures.saturating_add(1);
            w.last = now;
        }
    }

    /// A successful log-in forgets the username's failures from that
    /// address (not the address's: one good account must not unlock
    /// guessing at others).
    pub fn record_success(&self, username: &str, address: Option<IpAddr>) {
        let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        windows.remove(&Key::Pair(username.to_owned(), address));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn throttle(per_pair: u32, per_address: u32, per_username: u32) -> LoginThrottle {
        LoginThrottle::new(LoginLimits {
            per_pair,
            per_address,
            per_username,
            window: Duration::from_secs(60),
        })
    }

    fn ip(n: u8) -> Option<IpAddr> {
        Some(IpAddr::from([10, 0, 0, n]))
    }

    #[test]
    fn locks_a_username_from_one_address_after_the_pair_limit() {
        let t = throttle(2, 100, 100);
        t.record_failure("bob", ip(1));
        assert!(t.check("bob", ip(1)).is_ok());
        t.record_failure("bob", ip(1));
        let wait = t.check("bob", ip(1)).unwrap_err();
        assert!(wait <= Duration::from_secs(60) && wait > Duration::from_secs(50));
        t.record_success("bob", ip(1));
        assert!(t.check("bob", ip(1)).is_ok());
    }

    #[test]
    fn a_guesser_elsewhere_does_not_lock_the_owner_out() {
        let t = throttle(2, 100, 100);
        for _ in 0..5 {
            t.record_failure("bob", ip(1));
        }
        assert!(t.check("bob", ip(1)).is_err());
        assert!(t.check("bob", ip(2)).is_ok(), "the owner's address");
    }

    #[test]
    fn many_addresses_on_one_username_meet_growing_delays() {
        let t = throttle(100, 100, 3);
        for n in 0..3 {
            t.record_failure("bob", ip(n));
        }
        let first = t.check("bob", ip(9)).unwrap_err();
        assert!(first <= Duration::from_secs(1), "{first:?}");
        t.record_failure("bob", ip(9));
        let second = t.check("bob", ip(9)).unwrap_err();
        assert!(second > Duration::from_secs(1) && second <= Duration::from_secs(2));
    }

    #[test]
    fn locks_an_address_across_usernames() {
        let t = throttle(100, 2, 100);
        t.record_failure("a", ip(1));
        t.record_failure("b", ip(1));
        assert!(t.check("c", ip(1)).is_err());
        assert!(t.check("c", ip(2)).is_ok());
    }

    #[test]
    fn a_window_expires() {
        let t = LoginThrottle::new(LoginLimits {
            per_pair: 1,
            per_address: 1,
            per_username: 1,
            window: Duration::ZERO,
        });
        t.record_failure("a", ip(1));
        assert!(t.check("a", ip(1)).is_ok());
    }
}
