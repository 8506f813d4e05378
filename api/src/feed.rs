//! A player's feed (docs/API.md "Finding a game and coming back"): what
//! their tables told them away from the table (`domain::Table::notices`),
//! written with the events that caused it ([`store::feed`]); read
//! page by page, as a long poll woken across processes like the tables'
//! ([`crate::log::hub::CommitHub::subscribe_feed`]), or as a stream
//! ([`crate::sse::feed`]).

use chrono::{DateTime, Utc};
use domain::NoticeKind;
use serde::Serialize;
use sqlx::PgPool;
use tokio::time::Instant;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::log::hub::CommitHub;
use crate::service_error::ServiceError;
use store::chain;

/// The most items of a page, and of a stream's read.
pub const MAX_PAGE: i64 = 100;

/// The example of [`FeedItem`].
fn feed_item_example() -> serde_json::Value {
    serde_json::json!({
        "id": 812, "kind": "your_turn", "table_id": "7d8e2f4a-1b3c-4d5e-9f60-718293a4b5c6",
        "at": "2025-01-31T18:04:05.123456Z", "deadline": "2025-02-01T18:04:05.123456Z",
        "my_turn": 2
    })
}

/// One item of a player's feed.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = feed_item_example)]
pub struct FeedItem {
    /// Increasing in the order the player's items were committed: the
    /// feed's cursor, and a webhook's `webhook-id`.
    pub id: i64,
    pub kind: NoticeKind,
    /// The table it tells of.
    pub table_id: Uuid,
    /// RFC 3339 UTC: when it happened.
    #[schema(format = DateTime)]
    pub at: String,
    /// The turn's deadline (`your_turn`, `turn_ending` on a table with a
    /// clock).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(format = DateTime)]
    pub deadline: Option<String>,
    /// How many tables waited for the player once it happened (an app's
    /// badge).
    pub my_turn: i32,
}

impl FeedItem {
    /// The item as stored (a kind the store's check allows).
    pub fn of(item: &store::feed::Item) -> Result<Self, ServiceError> {
        let kind = serde_json::from_value(serde_json::Value::from(item.kind.as_str()))
            .map_err(ServiceError::internal)?;
        Ok(Self {
            id: item.id,
            kind,
            table_id: item.table_id,
            at: format_at(item.at),
            deadline: item.deadline.map(format_at),
            my_turn: item.my_turn,
        })
    }
}

fn format_at(at: DateTime<Utc>) -> String {
    chain::format_at(chain::truncate_at(at))
}

/// The example of [`FeedPage`].
fn feed_page_example() -> serde_json::Value {
    serde_json::json!({"items": [feed_item_example()], "next": 812})
}

/// A page of the caller's feed.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = feed_page_example)]
pub struct FeedPage {
    /// Oldest first.
    pub items: Vec<FeedItem>,
    /// Pass as `after` for the next page: the last item's id (the `after`
    /// sent when there is none).
    pub next: i64,
}

/// `account`'s items after `after`, at most `limit`; with a `deadline`, a
/// long poll: as soon as there is one (whichever process wrote it), or
/// none once the deadline passed.
pub async fn poll(
    pool: &PgPool,
    hub: &CommitHub,
    account: Uuid,
    after: i64,
    limit: i64,
    deadline: Option<Instant>,
) -> Result<Vec<FeedItem>, ServiceError> {
    // Subscribed before the first read: no item is missed.
    let mut woken = hub.subscribe_feed(account);
    loop {
        let items = store::feed::after(pool, account, after, limit).await?;
        let Some(deadline) = deadline.filter(|_| items.is_empty()) else {
            return items.iter().map(FeedItem::of).collect();
        };
        if !hub.wait(&mut woken, deadline).await {
            // A notification may be lost: one last read.
            let items = store::feed::after(pool, account, after, limit).await?;
            return items.iter().map(FeedItem::of).collect();
        }
    }
}
