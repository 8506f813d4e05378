//! Reads of the event log for round histories, replays, log exports and
//! audits (the log itself is read page by page with
//! [`super::events::read_after`]).

use sqlx::PgExecutor;
use uuid::Uuid;

use crate::StoredEvent;

/// The first event of type `kind` in a table's log (e.g. `game_started`,
/// whose data lists the players of the game).
#[tracing::instrument(skip(executor))]
pub async fn first_of_type(
    executor: impl PgExecutor<'_>,
    table_id: Uuid,
    kind: &str,
) -> Result<Option<StoredEvent>, sqlx::Error> {
    sqlx::query_as!(
        StoredEvent,
        r#"SELECT seq, type AS kind, v, at, data, prev_hash, hash
           FROM events WHERE table_id = $1 AND type = $2
           ORDER BY seq LIMIT 1"#,
        table_id,
        kind,
    )
    .fetch_optional(executor)
    .await
}

/// Does the log of a table hold an event of one of the types `kinds`?
#[tracing::instrument(skip(executor))]
pub async fn has_event_of_types(
    executor: impl PgExecutor<'_>,
    table_id: Uuid,
    kinds: &[&str],
) -> Result<bool, sqlx::Error> {
    let kinds: Vec<String> = kinds.iter().map(|k| (*k).to_owned()).collect();
    let found = sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM events WHERE table_id = $1 AND type = ANY($2)) AS "found!""#,
        table_id,
        &kinds,
    )
    .fetch_one(executor)
    .await?;
    Ok(found)
}
