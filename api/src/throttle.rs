//! Failed-login throttling, in memory (per process): at most N failures per
//! username and M per client address within a fixed window; past that, log-in
//! attempts are refused with 429 and `Retry-After` until the window ends,
//! without checking the password.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Username(String),
    Address(IpAddr),
}

#[derive(Debug, Clone, Copy)]
struct Window {
    started: Instant,
    failures: u32,
}

/// Shared by every worker of a process.
#[derive(Debug)]
pub struct LoginThrottle {
    windows: Mutex<HashMap<Key, Window>>,
    max_per_username: u32,
    max_per_address: u32,
    window: Duration,
}

/// Past this many tracked keys, expired windows are swept on each failure.
const SWEEP_ABOVE: usize = 10_000;

impl LoginThrottle {
    pub fn new(max_per_username: u32, max_per_address: u32, window: Duration) -> Self {
        Self {
            windows: Mutex::new(HashMap::new()),
            max_per_username: max_per_username.max(1),
            max_per_address: max_per_address.max(1),
            window,
        }
    }

    fn keys(username: &str, address: Option<IpAddr>) -> impl Iterator<Item = Key> {
        std::iter::once(Key::Username(username.to_lowercase())).chain(address.map(Key::Address))
    }

    fn limit(&self, key: &Key) -> u32 {
        match key {
            Key::Username(_) => self.max_per_username,
            Key::Address(_) => self.max_per_address,
        }
    }

    /// `Err(retry_after)` when this username or address is locked out.
    pub fn check(&self, username: &str, address: Option<IpAddr>) -> Result<(), Duration> {
        let now = Instant::now();
        let windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        let mut wait = Duration::ZERO;
        for key in Self::keys(username, address) {
            if let Some(w) = windows.get(&key) {
                let elapsed = now.duration_since(w.started);
                if elapsed < self.window && w.failures >= self.limit(&key) {
                    wait = wait.max(self.window - elapsed);
                }
            }
        }
        if wait.is_zero() {
            Ok(())
        } else {
            Err(wait)
        }
    }

    pub fn record_failure(&self, username: &str, address: Option<IpAddr>) {
        let now = Instant::now();
        let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        if windows.len() > SWEEP_ABOVE {
            windows.retain(|_, w| now.duration_since(w.started) < self.window);
        }
        for key in Self::keys(username, address) {
            let w = windows.entry(key).or_insert(Window {
                started: now,
                failures: 0,
            });
            if now.duration_since(w.started) >= self.window {
                *w = Window {
                    started: now,
                    failures: 0,
                };
            }
            w.failures = w.failures.saturating_add(1);
        }
    }

    /// A successful log-in forgets the username's failures (not the
    /// address's: one good account must not unlock guessing at others).
    pub fn record_success(&self, username: &str) {
        let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        windows.remove(&Key::Username(username.to_lowercase()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locks_after_max_failures_per_username_case_insensitively() {
        let t = LoginThrottle::new(2, 100, Duration::from_secs(60));
        assert!(t.check("Bob", None).is_ok());
        t.record_failure("bob", None);
        assert!(t.check("BOB", None).is_ok());
        t.record_failure("Bob", None);
        let wait = t.check("bob", None).unwrap_err();
        assert!(wait <= Duration::from_secs(60) && wait > Duration::from_secs(50));
        t.record_success("bob");
        assert!(t.check("bob", None).is_ok());
    }

    #[test]
    fn locks_an_address_across_usernames() {
        let t = LoginThrottle::new(100, 2, Duration::from_secs(60));
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        t.record_failure("a", Some(ip));
        t.record_failure("b", Some(ip));
        assert!(t.check("c", Some(ip)).is_err());
        assert!(t.check("c", None).is_ok());
    }

    #[test]
    fn a_window_expires() {
        let t = LoginThrottle::new(1, 1, Duration::ZERO);
        t.record_failure("a", None);
        assert!(t.check("a", None).is_ok());
    }
}
