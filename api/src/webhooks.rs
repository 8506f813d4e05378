//! Webhooks (docs/API.md "Finding a game and coming back"): every feed item
//! POSTed to `HUIT_WEBHOOK_URL` in the Standard Webhooks format, so that
//! any of its libraries verifies it.
//!
//! The items are the outbox: written `pending` in the transaction of the
//! events that cause them ([`store::feed`]), never by a request
//! thread. Every process runs one [`spawn`]ed sender: it claims due items
//! with `FOR UPDATE SKIP LOCKED` ([`store::outbox::claim`], each account's
//! oldest pending first, so an account's items arrive in order), sends
//! them concurrently on a pooled client with timeouts, and writes each
//! outcome in the claiming transaction. A process that dies mid-delivery
//! leaves its items pending and unlocked: another sends them again (at
//! least once, at worst twice). A failed attempt is retried after the
//! schedule's next wait; past the last, the item is failed, until an admin
//! sends it again. A 410 Gone pauses the URL until an admin resumes it.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use sqlx::PgPool;
use tokio::sync::Notify;

use crate::config::{RetrySchedule, WebhookSecret};
use crate::feed::FeedItem;
use crate::metric_names::{
    WEBHOOK_ATTEMPTS, WEBHOOK_DELIVERIES, WEBHOOK_LAG, WEBHOOK_OLDEST_PENDING, WEBHOOK_PENDING,
};
use crate::outbound::{self, ExtraRoots};
use store::feed::Item;
use store::outbox::{Delivery, Outcome};

/// Accounts whose items one process sends at once (each account's one
/// after the other, the accounts side by side).
const ACCOUNTS: i64 = 256;
/// Items of one account claimed at once.
const PER_ACCOUNT: i64 = 32;
/// How often a sender looks for due items when nothing woke it (retries
/// coming due, items of other processes).
const POLL: Duration = Duration::from_millis(500);

/// The signature of a message, as `webhook-signature` carries it:
/// `v1,` then the base64 of HMAC-SHA256(secret, `<id>.<timestamp>.<body>`).
pub fn sign(secret: &WebhookSecret, id: &str, timestamp: i64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(&secret.0).expect("HMAC takes any key length");
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    let tag = mac.finalize().into_bytes();
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(tag)
    )
}

/// The body of an item's webhook: `{type, timestamp, data: {...item,
/// account_id}}`.
pub fn body(item: &Item) -> Result<Vec<u8>, serde_json::Error> {
    let shown = FeedItem::of(item).map_err(serde::ser::Error::custom)?;
    let mut data = serde_json::to_value(&shown)?;
    data["account_id"] = serde_json::Value::String(item.account_id.to_string());
    serde_json::to_vec(&serde_json::json!({
        "type": item.kind,
        "timestamp": shown.at,
        "data": data,
    }))
}

/// Where and how webhooks are sent.
#[derive(Debug, Clone)]
pub struct Webhooks {
    pub url: String,
    secret: WebhookSecret,
    schedule: RetrySchedule,
    client: reqwest::Client,
}

impl Webhooks {
    /// Webhooks to `url` (`https://`, or `http://`), signed with `secret`,
    /// retried after `schedule`'s waits, each attempt given `timeout`; a
    /// receiver's certificate is verified against the platform's roots and
    /// `roots`.
    pub fn new(
        url: String,
        secret: WebhookSecret,
        schedule: RetrySchedule,
        timeout: Duration,
        roots: &ExtraRoots,
    ) -> Result<Self, String> {
        let client = outbound::client(roots)
            .timeout(timeout)
            .connect_timeout(timeout)
            .pool_idle_timeout(Duration::from_secs(60))
            .redirect(reqwest::redirect::Policy::none())
            .user_agent("huit-webhooks")
            .build()
            .map_err(|e| format!("webhooks: {e}"))?;
        reqwest::Url::parse(&url)
            .ok()
            .filter(|u| matches!(u.scheme(), "https" | "http") && u.host().is_some())
            .ok_or_else(|| format!("HUIT_WEBHOOK_URL: an https:// or http:// URL, not {url:?}"))?;
        Ok(Self {
            url,
            secret,
            schedule,
            client,
        })
    }

    /// One account's claimed items, one after the other until one is not
    /// delivered (the next wait for it): each attempt's item, outcome and
    /// what it counts as.
    async fn send_in_order(&self, items: &[Delivery]) -> Vec<(i64, Outcome, &'static str)> {
        let mut sent = Vec::with_capacity(items.len());
        for Delivery { item, attempts, .. } in items {
            let (outcome, counted) = self.attempt(item, *attempts).await;
            metrics::counter!(WEBHOOK_DELIVERIES, "outcome" => counted).increment(1);
            let delivered = outcome == Outcome::Delivered;
            if delivered {
                let lag = (Utc::now() - item.at).to_std().unwrap_or_default();
                metrics::histogram!(WEBHOOK_LAG).record(lag.as_secs_f64());
            }
            sent.push((item.id, outcome, counted));
            if !delivered {
                break;
            }
        }
        sent
    }

    /// One attempt at `item`, its `attempts` before: what to store.
    async fn attempt(&self, item: &Item, attempts: i32) -> (Outcome, &'static str) {
        metrics::counter!(WEBHOOK_ATTEMPTS).increment(1);
        let failed = |error: String| match self.schedule.next_after(attempts) {
            Some(next) => (Outcome::Retry { next, error }, "retry"),
            None => (Outcome::Failed { error }, "failed"),
        };
        let body = match body(item) {
            Ok(body) => body,
            Err(e) => {
                return (
                    Outcome::Failed {
                        error: e.to_string(),
                    },
                    "failed",
                )
            }
        };
        let (id, timestamp) = (item.id.to_string(), Utc::now().timestamp());
        let signature = sign(&self.secret, &id, timestamp, &body);
        let sent = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("webhook-id", &id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(body)
            .send()
            .await;
        match sent.map(|r| r.status()) {
            Ok(status) if status.is_success() => (Outcome::Delivered, "delivered"),
            Ok(reqwest::StatusCode::GONE) => (
                Outcome::Retry {
                    next: Utc::now(),
                    error: "410 Gone: deliveries paused".into(),
                },
                "gone",
            ),
            Ok(status) => failed(format!("answered {status}")),
            Err(e) => failed(outbound::described(&e.without_url())),
        }
    }
}

/// Sends the outbox's items from this process until it ends; `wake` is
/// notified when this process wrote items.
pub fn spawn(webhooks: Webhooks, pool: PgPool, wake: Arc<Notify>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            match send_due(&webhooks, &pool).await {
                Ok(Sent::Some) => {}
                Ok(Sent::None) => {
                    let _ = tokio::time::timeout(POLL, wake.notified()).await;
                }
                // New items change nothing while paused: no wake-ups.
                Ok(Sent::Paused) => tokio::time::sleep(POLL).await,
                Err(e) => {
                    tracing::warn!(error = %e, "webhooks: could not send");
                    tokio::time::sleep(POLL).await;
                }
            }
        }
    })
}

/// What a sender's look at the outbox did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sent {
    Some,
    /// Nothing was due.
    None,
    /// The URL is paused (a 410 Gone, until an admin resumes it).
    Paused,
}

/// Claims the items due now (unless the URL is paused), sends them (each
/// account's in order, the accounts at once) and stores each outcome, in
/// one transaction.
async fn send_due(webhooks: &Webhooks, pool: &PgPool) -> Result<Sent, sqlx::Error> {
    if store::outbox::paused_at(pool, &webhooks.url)
        .await?
        .is_some()
    {
        return Ok(Sent::Paused);
    }
    let mut tx = pool.begin().await?;
    let claimed = store::outbox::claim(&mut tx, ACCOUNTS, PER_ACCOUNT).await?;
    let accounts = claimed.chunk_by(|a, b| a.item.account_id == b.item.account_id);
    let sent = futures_util::future::join_all(accounts.map(|items| webhooks.send_in_order(items)));
    let mut gone = false;
    let mut settled = Vec::with_capacity(claimed.len());
    for (id, outcome, counted) in sent.await.into_iter().flatten() {
        gone |= counted == "gone";
        settled.push((id, outcome));
    }
    if !settled.is_empty() {
        store::outbox::settle(&mut *tx, &settled).await?;
    }
    if gone {
        tracing::warn!(url = %webhooks.url, "webhooks: 410 Gone, deliveries paused");
        store::outbox::set_paused(&mut *tx, &webhooks.url, true).await?;
    }
    tx.commit().await?;
    Ok(match (gone, settled.is_empty()) {
        (true, _) => Sent::Paused,
        (false, true) => Sent::None,
        (false, false) => Sent::Some,
    })
}

/// Fails the items still to deliver that are older than `before` (the
/// feed's retention), a batch at a time, counted as failed deliveries: a
/// URL paused for long, or one that keeps failing, leaves a bounded outbox.
pub async fn expire(pool: &PgPool, before: DateTime<Utc>, batch: i64) {
    match store::in_batches(batch, || store::outbox::expire(pool, before, batch)).await {
        Ok(expired) => {
            metrics::counter!(WEBHOOK_DELIVERIES, "outcome" => "failed").increment(expired)
        }
        Err(e) => tracing::warn!(error = %e, "webhooks: items past the retention were not failed"),
    }
}

/// The gauges of a scrape: the items still to deliver, and the oldest's
/// age.
pub async fn gauge(pool: PgPool) {
    match store::outbox::backlog(&pool).await {
        Ok((pending, oldest)) => {
            metrics::gauge!(WEBHOOK_PENDING).set(pending as f64);
            metrics::gauge!(WEBHOOK_OLDEST_PENDING).set(oldest);
        }
        Err(e) => tracing::warn!(error = %e, "metrics: the webhooks' backlog was not read"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Standard Webhooks libraries' own vector (`test_sign_function`
    /// in libraries/python/tests/test_webhooks.py of
    /// github.com/standard-webhooks/standard-webhooks).
    #[test]
    fn a_signature_is_the_standard_webhooks_one() {
        let secret: WebhookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".parse().unwrap();
        assert_eq!(
            sign(
                &secret,
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1614265330,
                br#"{"test": 2432232314}"#
            ),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn a_body_is_type_timestamp_and_the_item_with_its_account() {
        let at = chrono::DateTime::parse_from_rfc3339("2025-01-31T18:04:05.123456Z")
            .unwrap()
            .with_timezone(&Utc);
        let item = Item {
            id: 7,
            account_id: uuid::Uuid::from_u128(1),
            kind: "turn_ending".into(),
            table_id: uuid::Uuid::from_u128(2),
            at,
            deadline: Some(at + chrono::Duration::seconds(6)),
            my_turn: 3,
        };
        let body: serde_json::Value = serde_json::from_slice(&body(&item).unwrap()).unwrap();
        assert_eq!(
            body,
            serde_json::json!({
                "type": "turn_ending",
                "timestamp": "2025-01-31T18:04:05.123456Z",
                "data": {
                    "id": 7, "kind": "turn_ending",
                    "table_id": "00000000-0000-0000-0000-000000000002",
                    "at": "2025-01-31T18:04:05.123456Z",
                    "deadline": "2025-01-31T18:04:11.123456Z",
                    "my_turn": 3,
                    "account_id": "00000000-0000-0000-0000-000000000001"
                }
            })
        );
    }
}
