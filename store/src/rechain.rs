//! The one-time rewrite of the logs written before event format 3, whose
//! `player_joined` and `game_started` data named each person inside the
//! hashed data (`username`): a name a hash binds could never be erased.
//! The event format had not been released, so those logs are rewritten
//! once, at the first start of a server that knows format 3: the names
//! leave the data, and each such log's hashes are computed again from its
//! first event (seq, type, version, time, salt and every other field
//! unchanged). Done once per database (`log_rewrites`); the README says so.
//!
//! The log is append-only (a trigger refuses updates): the rewrite lifts
//! that trigger inside its own transaction, which holds the events table
//! alone until it commits (no server appends meanwhile).

use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

use ledger::chain::{event_hash, format_at, GENESIS_PREV_HASH};

/// The rewrite's name in `log_rewrites`.
const UNNAMED: &str = "persons_by_account_id";

/// Rewrites the logs that name persons, unless done before: how many logs
/// were rewritten.
pub async fn unname_logs_once(pool: &PgPool) -> Result<usize, sqlx::Error> {
    let done = sqlx::query_scalar!(
        "SELECT count(*) AS \"n!\" FROM log_rewrites WHERE name = $1",
        UNNAMED
    )
    .fetch_one(pool)
    .await?;
    if done > 0 {
        return Ok(0);
    }
    let rewritten = unname_logs(pool).await?;
    sqlx::query!(
        "INSERT INTO log_rewrites (name) VALUES ($1) ON CONFLICT DO NOTHING",
        UNNAMED
    )
    .execute(pool)
    .await?;
    if rewritten > 0 {
        tracing::info!(
            logs = rewritten,
            "logs rewritten to name persons by account id only"
        );
    }
    Ok(rewritten)
}

/// Rewrites every log that names a person in its data (see the module
/// documentation), in one transaction: how many.
pub async fn unname_logs(pool: &PgPool) -> Result<usize, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let tables = sqlx::query_scalar!(
        r#"SELECT DISTINCT table_id AS "table_id!" FROM events
           WHERE type IN ('player_joined', 'game_started')
             AND (data::jsonb ? 'username'
                  OR jsonb_path_exists(data::jsonb, '$.players[*].username'))"#
    )
    .fetch_all(&mut *tx)
    .await?;
    if tables.is_empty() {
        return Ok(0);
    }
    sqlx::query!("ALTER TABLE events DISABLE TRIGGER events_append_only")
        .execute(&mut *tx)
        .await?;
    for &table_id in &tables {
        rechain(&mut tx, table_id).await?;
        sqlx::query!("DELETE FROM kept_audits WHERE table_id = $1", table_id)
            .execute(&mut *tx)
            .await?;
    }
    sqlx::query!("ALTER TABLE events ENABLE TRIGGER events_append_only")
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(tables.len())
}

/// One log without its names, its hashes computed again.
async fn rechain(conn: &mut sqlx::PgConnection, table_id: Uuid) -> Result<(), sqlx::Error> {
    let events = sqlx::query!(
        r#"SELECT seq, type AS kind, v, at, data::jsonb AS "data!", hash
           FROM events WHERE table_id = $1 ORDER BY seq"#,
        table_id
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut prev = GENESIS_PREV_HASH.to_owned();
    for e in events {
        let mut data = e.data;
        let unnamed = unname(&e.kind, &mut data);
        let hash = event_hash(&prev, e.seq, &e.kind, e.v, &format_at(e.at), &data);
        if unnamed || hash != e.hash {
            sqlx::query!(
                "UPDATE events SET data = $3::jsonb::json, prev_hash = $4, hash = $5
                 WHERE table_id = $1 AND seq = $2",
                table_id,
                e.seq,
                data,
                prev,
                hash,
            )
            .execute(&mut *conn)
            .await?;
        }
        prev = hash;
    }
    Ok(())
}

/// Takes the persons' names out of an event's data: whether it held any.
fn unname(kind: &str, data: &mut Value) -> bool {
    let forget = |seated: &mut Value| {
        seated
            .as_object_mut()
            .and_then(|o| o.remove("username"))
            .is_some()
    };
    match kind {
        "player_joined" => forget(data),
        "game_started" => data
            .get_mut("players")
            .and_then(Value::as_array_mut)
            .map(|players| players.iter_mut().map(forget).fold(false, |a, b| a | b))
            .unwrap_or(false),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seat_loses_its_name_and_nothing_else() {
        let mut joined =
            serde_json::json!({"seat": 1, "account_id": "a", "username": "alice", "salt": "00"});
        assert!(unname("player_joined", &mut joined));
        assert_eq!(
            joined,
            serde_json::json!({"seat": 1, "account_id": "a", "salt": "00"})
        );
        assert!(!unname("player_joined", &mut joined), "done already");
        let mut started = serde_json::json!({"players": [
            {"seat": 0, "account_id": "a", "username": "alice"},
            {"seat": 1, "account_id": null, "username": "basic bot", "bot": "basic"}
        ]});
        assert!(unname("game_started", &mut started));
        assert_eq!(
            started,
            serde_json::json!({"players": [
                {"seat": 0, "account_id": "a"},
                {"seat": 1, "account_id": null, "bot": "basic"}
            ]})
        );
        let mut moved = serde_json::json!({"seat": 0, "username": "x"});
        assert!(
            !unname("card_played", &mut moved),
            "another type keeps its data"
        );
    }
}
