//! Push to phones (docs/API.md "Push to phones"): every feed item sent to
//! each device of its account through Apple's APNs ([`apns`]) or Google's
//! FCM ([`fcm`]), unless the player follows that table or their feed
//! ([`crate::watchers`] keeps `watching`, across processes).
//!
//! Sent like the webhooks ([`crate::webhooks`]), from an outbox written in
//! the transaction of the events that cause it ([`store::pushes`]): every
//! process runs one [`spawn`]ed sender, which claims due pushes with
//! `FOR UPDATE SKIP LOCKED` (each device's oldest first, so a device's
//! pushes go in order), sends them concurrently, and writes each outcome in
//! the claiming transaction: a process that dies mid-delivery leaves them
//! pending and unlocked, for another to send again. A 429, a 5xx or no
//! answer is retried after the schedule's next wait
//! (`HUIT_WEBHOOK_RETRY_SCHEDULE`); a token its platform calls dead drops
//! its device; any other refusal fails the push (admins may send it again).

pub mod apns;
pub mod fcm;

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use tokio::sync::Notify;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::config::{RetrySchedule, Settings};
use crate::metric_names::{
    PUSHES, PUSH_DEVICES_DROPPED, PUSH_LAG, PUSH_OLDEST_PENDING, PUSH_PENDING,
};
use crate::outbound::ExtraRoots;
use store::feed::Item;
use store::pushes::{Outcome, Push};

/// Devices whose pushes one process sends at once (each device's one
/// after the other, the devices side by side).
const DEVICES: i64 = 256;
/// Pushes of one device claimed at once.
const PER_DEVICE: i64 = 32;
/// How often a sender looks for due pushes when nothing woke it (retries
/// coming due, pushes written by other processes).
const POLL: Duration = Duration::from_millis(500);
/// How long a woken sender lets feed items gather before it looks: every
/// move that writes one wakes it, and most write no push (players who
/// follow, accounts without a phone): one look per move would cost the
/// moves a third of their rate (BENCHMARKS.md, twenty-sixth pass).
const GATHER: Duration = Duration::from_millis(20);

/// A phone's push service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Platform {
    /// Apple Push Notification service (iOS): the device token, in hex.
    Apns,
    /// Firebase Cloud Messaging (Android): the registration token.
    Fcm,
}

impl Platform {
    /// As `devices.platform` stores it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Apns => "apns",
            Self::Fcm => "fcm",
        }
    }

    /// The platform `devices.platform` names.
    pub fn stored(platform: &str) -> Option<Self> {
        match platform {
            "apns" => Some(Self::Apns),
            "fcm" => Some(Self::Fcm),
            _ => None,
        }
    }

    /// Whether `token` is one of this platform's: an APNs device token is
    /// hex (32 bytes today; Apple asks not to count on it), an FCM token
    /// URL-safe characters and colons.
    pub fn takes(self, token: &str) -> bool {
        match self {
            Self::Apns => {
                (64..=200).contains(&token.len()) && token.bytes().all(|b| b.is_ascii_hexdigit())
            }
            Self::Fcm => {
                (20..=4096).contains(&token.len())
                    && token
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b':'))
            }
        }
    }
}

/// What a push service answered one push.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Delivered,
    /// The token is dead (APNs 410 or `BadDeviceToken`, FCM
    /// `UNREGISTERED`): its device is dropped.
    Dead(String),
    /// A 429, a 5xx, an expired credential or no answer: tried again after
    /// the schedule's next wait.
    Again(String),
    /// Refused for good (another 4xx): the push fails.
    Refused(String),
}

/// A push's HTTP answer when it needs reading: `Err` with what it means
/// when it does not (a 2xx: delivered; no answer: tried again).
fn refusal(
    sent: reqwest::Result<reqwest::Response>,
    service: &str,
) -> Result<reqwest::Response, Answer> {
    match sent {
        Ok(response) if response.status().is_success() => Err(Answer::Delivered),
        Ok(response) => Ok(response),
        Err(e) => Err(Answer::Again(format!(
            "{service}: {}",
            crate::outbound::described(&e.without_url())
        ))),
    }
}

/// A client for a push service (APNs, FCM), trusting `roots` too: each
/// request given `timeout`, connections kept 10 minutes, no redirect.
fn client(roots: &ExtraRoots, timeout: Duration) -> reqwest::ClientBuilder {
    crate::outbound::client(roots)
        .timeout(timeout)
        .connect_timeout(timeout)
        .pool_idle_timeout(Duration::from_secs(600))
        .redirect(reqwest::redirect::Policy::none())
        .user_agent("huit-push")
}

/// The localisation key of an item's text (`huit.<kind>`, and
/// `huit.<kind>.title` for its title): the app holds the words, in the
/// player's language.
fn text_key(item: &Item) -> String {
    format!("huit.{}", item.kind)
}

/// The arguments of an item's text: how many tables wait for the player.
fn text_args(item: &Item) -> Vec<String> {
    vec![item.my_turn.to_string()]
}

/// The senders of a process, one per platform it pushes to.
#[derive(Debug, Clone)]
pub struct Pushers {
    apns: Option<Arc<apns::Apns>>,
    fcm: Option<Arc<fcm::Fcm>>,
    schedule: RetrySchedule,
}

impl Pushers {
    /// The platforms `settings` configure (none: `None`), their clients
    /// trusting `roots` too; an error says what is missing or unreadable.
    pub async fn of(settings: &Settings, roots: &ExtraRoots) -> Result<Option<Self>, String> {
        let timeout = Duration::from_secs(settings.push_timeout_secs.max(1));
        let apns = apns::Apns::of(settings, roots, timeout)?.map(Arc::new);
        let fcm = match &settings.fcm_credentials {
            None => None,
            Some(path) => Some(Arc::new(
                fcm::Fcm::new(path, &settings.fcm_url, roots, timeout).await?,
            )),
        };
        Ok((apns.is_some() || fcm.is_some()).then(|| Self {
            apns,
            fcm,
            schedule: settings.webhook_retry_schedule.clone(),
        }))
    }

    /// Whether this process pushes to `platform`.
    pub fn pushes_to(&self, platform: Platform) -> bool {
        match platform {
            Platform::Apns => self.apns.is_some(),
            Platform::Fcm => self.fcm.is_some(),
        }
    }

    /// One push, to its device's platform.
    async fn send(&self, platform: Option<Platform>, push: &Push) -> Answer {
        let not_on = |name: &str| Answer::Refused(format!("this server does not push to {name}"));
        match platform {
            Some(Platform::Apns) => match &self.apns {
                Some(apns) => apns.send(&push.token, &push.item).await,
                None => not_on("APNs"),
            },
            Some(Platform::Fcm) => match &self.fcm {
                Some(fcm) => fcm.send(&push.token, &push.item).await,
                None => not_on("FCM"),
            },
            None => not_on(&push.platform),
        }
    }

    /// One device's claimed pushes, one after the other until one is to be
    /// tried again (the next wait for it) or the device is dead: each
    /// push's outcome, and the device when it is to be dropped.
    async fn send_in_order(&self, pushes: &[Push]) -> (Vec<(i64, Outcome)>, Option<Uuid>) {
        let mut settled = Vec::with_capacity(pushes.len());
        for push in pushes {
            let platform = Platform::stored(&push.platform);
            let label = platform.map_or("unknown", Platform::as_str);
            let count = |outcome: &'static str| {
                metrics::counter!(PUSHES, "platform" => label, "outcome" => outcome).increment(1);
            };
            if push.watched {
                count("skipped");
                settled.push((push.id, Outcome::Skipped));
                continue;
            }
            match self.send(platform, push).await {
                Answer::Delivered => {
                    count("delivered");
                    let lag = (Utc::now() - push.item.at).to_std().unwrap_or_default();
                    metrics::histogram!(PUSH_LAG, "platform" => label).record(lag.as_secs_f64());
                    settled.push((push.id, Outcome::Delivered));
                }
                Answer::Dead(why) => {
                    count("dead");
                    tracing::info!(device = %push.device_id, %why, "push: dead token, device dropped");
                    return (settled, Some(push.device_id));
                }
                Answer::Again(error) => {
                    match self.schedule.next_after(push.attempts) {
                        Some(next) => {
                            count("retry");
                            settled.push((push.id, Outcome::Retry { next, error }));
                        }
                        None => {
                            count("failed");
                            settled.push((push.id, Outcome::Failed { error }));
                        }
                    }
                    break;
                }
                Answer::Refused(error) => {
                    count("failed");
                    settled.push((push.id, Outcome::Failed { error }));
                }
            }
        }
        (settled, None)
    }
}

/// Sends the pushes due from this process until it ends; `wake` is
/// notified when this process wrote feed items.
pub fn spawn(pushers: Pushers, pool: PgPool, wake: Arc<Notify>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            match send_due(&pushers, &pool).await {
                Ok(true) => {}
                Ok(false) => {
                    let _ = tokio::time::timeout(POLL, wake.notified()).await;
                    tokio::time::sleep(GATHER).await;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "push: could not send");
                    tokio::time::sleep(POLL).await;
                }
            }
        }
    })
}

/// Claims the pushes due now, sends them (each device's in order, the
/// devices at once), stores each outcome and drops the dead devices, in
/// one transaction: whether there were any.
async fn send_due(pushers: &Pushers, pool: &PgPool) -> Result<bool, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let claimed = store::pushes::claim(&mut tx, DEVICES, PER_DEVICE).await?;
    if claimed.is_empty() {
        return Ok(false);
    }
    let devices = claimed.chunk_by(|a, b| a.device_id == b.device_id);
    let sent = futures_util::future::join_all(devices.map(|p| pushers.send_in_order(p))).await;
    let (mut settled, mut dead) = (Vec::with_capacity(claimed.len()), Vec::new());
    for (outcomes, dead_device) in sent {
        settled.extend(outcomes);
        dead.extend(dead_device);
    }
    if !settled.is_empty() {
        store::pushes::settle(&mut *tx, &settled).await?;
    }
    if !dead.is_empty() {
        let dropped = store::devices::drop_dead(&mut *tx, &dead).await?;
        metrics::counter!(PUSH_DEVICES_DROPPED).increment(dropped);
    }
    tx.commit().await?;
    Ok(true)
}

/// Fails the pushes still to send whose item is older than `before` (the
/// feed's retention), a batch at a time: a platform down for that long
/// leaves a bounded outbox.
pub async fn expire(pool: &PgPool, before: DateTime<Utc>, batch: i64) {
    match store::in_batches(batch, || store::pushes::expire(pool, before, batch)).await {
        Ok(expired) => {
            metrics::counter!(PUSHES, "platform" => "any", "outcome" => "failed").increment(expired)
        }
        Err(e) => tracing::warn!(error = %e, "push: pushes past the retention were not failed"),
    }
}

/// The gauges of a scrape: the pushes still to send, and the oldest's age.
pub async fn gauge(pool: PgPool) {
    match store::pushes::backlog(&pool).await {
        Ok((pending, oldest)) => {
            metrics::gauge!(PUSH_PENDING).set(pending as f64);
            metrics::gauge!(PUSH_OLDEST_PENDING).set(oldest);
        }
        Err(e) => tracing::warn!(error = %e, "metrics: the pushes' backlog was not read"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item() -> Item {
        Item {
            id: 812,
            account_id: Uuid::from_u128(1),
            kind: "your_turn".into(),
            table_id: Uuid::from_u128(2),
            at: chrono::DateTime::parse_from_rfc3339("2025-01-31T18:04:05Z")
                .unwrap()
                .with_timezone(&Utc),
            deadline: None,
            my_turn: 3,
        }
    }

    #[test]
    fn an_apns_payload_is_a_localised_alert_with_the_badge_and_the_item() {
        assert_eq!(
            apns::payload(&item()),
            serde_json::json!({
                "aps": {
                    "alert": {
                        "title-loc-key": "huit.your_turn.title",
                        "loc-key": "huit.your_turn",
                        "loc-args": ["3"],
                    },
                    "badge": 3,
                    "sound": "default",
                },
                "kind": "your_turn",
                "table_id": "00000000-0000-0000-0000-000000000002",
                "item_id": 812,
            })
        );
    }

    #[test]
    fn an_fcm_message_is_high_priority_collapsed_by_table_with_data_as_strings() {
        assert_eq!(
            fcm::message("tok:en", &item()),
            serde_json::json!({"message": {
                "token": "tok:en",
                "data": {
                    "kind": "your_turn",
                    "table_id": "00000000-0000-0000-0000-000000000002",
                    "item_id": "812",
                },
                "android": {
                    "priority": "high",
                    "collapse_key": "00000000-0000-0000-0000-000000000002",
                    "notification": {
                        "title_loc_key": "huit.your_turn.title",
                        "body_loc_key": "huit.your_turn",
                        "body_loc_args": ["3"],
                        "notification_count": 3,
                        "tag": "00000000-0000-0000-0000-000000000002",
                    },
                },
            }})
        );
    }

    #[test]
    fn a_platform_reads_back_what_it_stores() {
        for platform in [Platform::Apns, Platform::Fcm] {
            assert_eq!(Platform::stored(platform.as_str()), Some(platform));
        }
        assert_eq!(Platform::stored("mpns"), None);
    }
}
