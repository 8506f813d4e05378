//! Finding a game: a new table's lobby columns, quick play's open tables
//! (one per settings, by `game_tables_quickplay_open_key`) and private
//! tables' invitations (see migration 9).

use sqlx::{PgConnection, PgExecutor};
use uuid::Uuid;

use super::{violates, StoreError};

/// The lobby columns of a new table.
#[derive(Debug, Clone, Copy)]
pub struct LobbyRow<'a> {
    pub visibility: &'a str,
    /// A private table's code and its SHA-256.
    pub invite: Option<(&'a str, &'a [u8])>,
    /// Quick play: the settings' key (the table opens open to quick play).
    pub quickplay_key: Option<&'a str>,
}

/// Creates the projection row of a new table with its seats and lobby
/// columns (status `waiting`, version 0); append its first events in the
/// same transaction. [`StoreError::QuickPlayOpen`] when a quick-play table
/// of these settings is open already (`game_tables_quickplay_open_key`).
#[tracing::instrument(skip(conn, lobby))]
pub async fn insert(
    conn: &mut PgConnection,
    id: Uuid,
    ruleset: &str,
    seats: i32,
    created_by: Uuid,
    lobby: LobbyRow<'_>,
) -> Result<(), StoreError> {
    let (code, digest) = lobby.invite.unzip();
    sqlx::query!(
        r#"INSERT INTO game_tables (id, ruleset, seats, created_by, visibility, invite_code,
                                    invite_digest, quickplay_key, quickplay_open)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)"#,
        id,
        ruleset,
        seats,
        created_by,
        lobby.visibility,
        code,
        digest,
        lobby.quickplay_key,
    )
    .execute(conn)
    .await
    .map_err(quickplay_open)?;
    Ok(())
}

/// [`StoreError::QuickPlayOpen`] for the index that keeps one open table
/// per settings.
fn quickplay_open(err: sqlx::Error) -> StoreError {
    match violates(&err, "game_tables_quickplay_open_key") {
        true => StoreError::QuickPlayOpen,
        false => err.into(),
    }
}

/// The quick-play table open for these settings.
#[tracing::instrument(skip(executor))]
pub async fn open_table(
    executor: impl PgExecutor<'_>,
    key: &str,
) -> Result<Option<Uuid>, sqlx::Error> {
    sqlx::query_scalar!("SELECT id FROM game_tables WHERE quickplay_open = $1", key)
        .fetch_optional(executor)
        .await
}

/// The waiting quick-play table of these settings where `account_id`
/// sits, if any.
#[tracing::instrument(skip(executor))]
pub async fn waiting_at(
    executor: impl PgExecutor<'_>,
    account_id: Uuid,
    key: &str,
) -> Result<Option<Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT g.id FROM game_tables g JOIN table_players p ON p.table_id = g.id
           WHERE p.account_id = $1 AND g.quickplay_key = $2 AND g.status = 'waiting'
           ORDER BY g.created_at LIMIT 1"#,
        account_id,
        key,
    )
    .fetch_optional(executor)
    .await
}

/// The waiting quick-play tables of `ruleset` where `account_id` sits,
/// but the one of these settings.
#[tracing::instrument(skip(executor))]
pub async fn waiting_elsewhere(
    executor: impl PgExecutor<'_>,
    account_id: Uuid,
    ruleset: &str,
    key: &str,
) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT g.id FROM game_tables g JOIN table_players p ON p.table_id = g.id
           WHERE p.account_id = $1 AND g.ruleset = $2 AND g.quickplay_key <> $3
             AND g.status = 'waiting'
           ORDER BY g.created_at"#,
        account_id,
        ruleset,
        key,
    )
    .fetch_all(executor)
    .await
}

/// After a table's lobby events (in their transaction): a quick-play table
/// is open while it waits with a person seated, and closed once it started
/// or its last person left. [`StoreError::QuickPlayOpen`] when reopening
/// it would make two open tables of one settings.
#[tracing::instrument(skip(conn))]
pub async fn reopen_or_close(conn: &mut PgConnection, id: Uuid) -> Result<(), StoreError> {
    sqlx::query!(
        r#"UPDATE game_tables g
           SET quickplay_open = CASE
               WHEN g.status = 'waiting'
                    AND EXISTS (SELECT 1 FROM table_players p WHERE p.table_id = g.id)
               THEN g.quickplay_key END
           WHERE g.id = $1 AND g.quickplay_key IS NOT NULL"#,
        id,
    )
    .execute(conn)
    .await
    .map_err(quickplay_open)?;
    Ok(())
}

/// The table whose invitation has this SHA-256, and its code.
#[tracing::instrument(skip_all)]
pub async fn invited_to(
    executor: impl PgExecutor<'_>,
    digest: &[u8],
) -> Result<Option<(Uuid, String)>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT id, invite_code AS "code!" FROM game_tables
           WHERE invite_digest = $1 AND invite_code IS NOT NULL"#,
        digest,
    )
    .fetch_optional(executor)
    .await?;
    Ok(row.map(|r| (r.id, r.code)))
}

/// A private table's invitation code (`None`: public, or no such table).
#[tracing::instrument(skip(executor))]
pub async fn invite_code(
    executor: impl PgExecutor<'_>,
    id: Uuid,
) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT invite_code AS "code!" FROM game_tables
           WHERE id = $1 AND invite_code IS NOT NULL"#,
        id
    )
    .fetch_optional(executor)
    .await
}

/// Replaces a private table's invitation; `false` when the table is
/// public.
#[tracing::instrument(skip_all, fields(%id))]
pub async fn renew_invite(
    executor: impl PgExecutor<'_>,
    id: Uuid,
    code: &str,
    digest: &[u8],
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        r#"UPDATE game_tables SET invite_code = $2, invite_digest = $3
           WHERE id = $1 AND visibility = 'private'"#,
        id,
        code,
        digest,
    )
    .execute(executor)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Notes the seats a rematch keeps for `accounts`.
#[tracing::instrument(skip(conn))]
pub async fn reserve(
    conn: &mut PgConnection,
    table_id: Uuid,
    accounts: &[Uuid],
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        r#"INSERT INTO table_reservations (account_id, table_id)
           SELECT unnest($2::uuid[]), $1 ON CONFLICT DO NOTHING"#,
        table_id,
        accounts,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// The waiting rematches that keep a seat for `account_id`.
#[tracing::instrument(skip(executor))]
pub async fn rematches_waiting_for(
    executor: impl PgExecutor<'_>,
    account_id: Uuid,
) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT r.table_id FROM table_reservations r
           JOIN game_tables g ON g.id = r.table_id
           WHERE r.account_id = $1 AND g.status = 'waiting'"#,
        account_id,
    )
    .fetch_all(executor)
    .await
}
