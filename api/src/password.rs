//! Password hashing: argon2id, m = 19456 KiB, t = 2, p = 1 (the OWASP
//! minimum). These are CPU-heavy: call them through [`in_turn`], never
//! directly on an async worker.

use std::sync::{LazyLock, OnceLock};

use actix_web::error::BlockingError;
use actix_web::web;
use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use tokio::sync::Semaphore;

pub const MEMORY_KIB: u32 = 19_456;
pub const ITERATIONS: u32 = 2;
pub const PARALLELISM: u32 = 1;

fn argon2() -> Argon2<'static> {
    let params = Params::new(MEMORY_KIB, ITERATIONS, PARALLELISM, None)
        .expect("constant argon2 parameters are valid");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// The PHC string (`$argon2id$v=19$m=19456,t=2,p=1$…`) of a password.
pub fn hash(password: &str) -> Result<String, argon2::password_hash::Error> {
    let salt = SaltString::generate(&mut OsRng);
    Ok(argon2()
        .hash_password(password.as_bytes(), &salt)?
        .to_string())
}

/// Whether `password` matches the stored PHC string. The parameters are read
/// from the stored string, so older hashes keep verifying.
pub fn verify(password: &str, phc: &str) -> Result<bool, argon2::password_hash::Error> {
    let parsed = PasswordHash::new(phc)?;
    match argon2().verify_password(password.as_bytes(), &parsed) {
        Ok(()) => Ok(true),
        Err(argon2::password_hash::Error::Password) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Spends the same time as a real verification, for unknown usernames, so
/// that timing does not tell which usernames exist.
pub fn verify_dummy(password: &str) {
    static DUMMY: OnceLock<String> = OnceLock::new();
    let phc = DUMMY.get_or_init(|| hash("not a real password").unwrap_or_default());
    let _ = verify(password, phc);
}

/// How many hashes or verifications run at once: one per core. Each holds
/// `MEMORY_KIB` (19 MiB) while it runs, and more than one per core only
/// shares the cores. Without a limit, 64 players signing up and logging in
/// at once took the server from 17 MB to 1.9 GB resident (and a flood of
/// log-ins, even with wrong passwords, could take any amount).
pub fn at_once() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

static SLOTS: LazyLock<Semaphore> = LazyLock::new(|| Semaphore::new(at_once()));

/// Runs `work` (a hash or a verification) on a blocking thread once one of
/// the [`at_once`] slots is free; a burst of requests waits its turn.
pub async fn in_turn<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, BlockingError> {
    let _slot = SLOTS.acquire().await.expect("the slots are never closed");
    web::block(work).await
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    #[actix_web::test]
    async fn no_more_than_one_hash_per_core_runs_at_once() {
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let work = (0..4 * at_once() + 2).map(|_| {
            let (running, most) = (running.clone(), most.clone());
            in_turn(move || {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(20));
                running.fetch_sub(1, Ordering::SeqCst);
            })
        });
        for done in futures_util::future::join_all(work).await {
            done.unwrap();
        }
        let most = most.load(Ordering::SeqCst);
        assert!((1..=at_once()).contains(&most), "{most} at once");
    }

    #[test]
    fn hash_then_verify() {
        let phc = hash("correct horse").unwrap();
        assert!(phc.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
        assert!(verify("correct horse", &phc).unwrap());
        assert!(!verify("wrong horse", &phc).unwrap());
    }
}
