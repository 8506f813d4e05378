//! `game_tables`: one projection row per table. The events are the truth;
//! `version` is the seq of the last event and is moved by
//! the log's insert ([`super::events::insert_batch`]) only.

use chrono::{DateTime, Utc};
use domain::{Status, Visibility};
use serde_json::Value;
use sqlx::{PgConnection, PgExecutor};
use uuid::Uuid;

#[derive(Debug, Clone)]
pub struct TableRow {
    pub id: Uuid,
    pub ruleset: String,
    pub status: String,
    pub version: i64,
    pub created_by: Uuid,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub snapshot: Option<Value>,
    /// When the server must next act on the table by itself.
    pub due_at: Option<DateTime<Utc>>,
}

/// Creates the projection row of a new table (status `waiting`, version 0).
/// Append its first event (`table_created`) in the same transaction.
#[tracing::instrument(skip(executor))]
pub async fn insert(
    executor: impl PgExecutor<'_>,
    id: Uuid,
    ruleset: &str,
    created_by: Uuid,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO game_tables (id, ruleset, created_by) VALUES ($1, $2, $3)",
        id,
        ruleset,
        created_by,
    )
    .execute(executor)
    .await?;
    Ok(())
}

#[tracing::instrument(skip(executor))]
pub async fn get(executor: impl PgExecutor<'_>, id: Uuid) -> Result<Option<TableRow>, sqlx::Error> {
    sqlx::query_as!(
        TableRow,
        r#"SELECT id, ruleset, status, version, created_by, created_at, updated_at, snapshot, due_at
           FROM game_tables WHERE id = $1"#,
        id,
    )
    .fetch_optional(executor)
    .await
}

/// Whether the table is public (`None`: no such table).
#[tracing::instrument(skip(executor))]
pub async fn is_public(
    executor: impl PgExecutor<'_>,
    id: Uuid,
) -> Result<Option<bool>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT visibility = 'public' AS "public!" FROM game_tables WHERE id = $1"#,
        id,
    )
    .fetch_optional(executor)
    .await
}

/// Updates the status and cached snapshot of a table at a known version
/// (after an append, in the same transaction). `false` when the row is not
/// at that version.
#[tracing::instrument(skip(executor, snapshot))]
pub async fn update_projection(
    executor: impl PgExecutor<'_>,
    id: Uuid,
    version: i64,
    status: &str,
    snapshot: Option<&Value>,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        r#"UPDATE game_tables SET status = $3, snapshot = $4, updated_at = now()
           WHERE id = $1 AND version = $2"#,
        id,
        version,
        status,
        snapshot,
    )
    .execute(executor)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Creates the projection row of a new table with its number of seats
/// (status `waiting`, version 0). Append its first events in the same
/// transaction.
#[tracing::instrument(skip(executor))]
pub async fn insert_with_seats(
    executor: impl PgExecutor<'_>,
    id: Uuid,
    ruleset: &str,
    seats: i32,
    created_by: Uuid,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO game_tables (id, ruleset, seats, created_by) VALUES ($1, $2, $3, $4)",
        id,
        ruleset,
        seats,
        created_by,
    )
    .execute(executor)
    .await?;
    Ok(())
}

/// A table as listed.
#[derive(Debug, Clone)]
pub struct ListedTable {
    pub id: Uuid,
    pub ruleset: String,
    pub status: Status,
    pub seats: Option<i32>,
    pub version: i64,
    pub created_by: Uuid,
    pub created_at: DateTime<Utc>,
    pub visibility: Visibility,
}

/// [`ListedTable`] as the row holds it.
struct ListedRow {
    id: Uuid,
    ruleset: String,
    status: String,
    seats: Option<i32>,
    version: i64,
    created_by: Uuid,
    created_at: DateTime<Utc>,
    visibility: String,
}

impl TryFrom<ListedRow> for ListedTable {
    type Error = sqlx::Error;

    fn try_from(r: ListedRow) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id: r.id,
            ruleset: r.ruleset,
            status: r
                .status
                .parse()
                .map_err(|e: String| sqlx::Error::Decode(e.into()))?,
            seats: r.seats,
            version: r.version,
            created_by: r.created_by,
            created_at: r.created_at,
            visibility: match r.visibility.as_str() {
                "private" => Visibility::Private,
                _ => Visibility::Public,
            },
        })
    }
}

/// Tables in `(created_at, id)` order after the cursor, at most `limit`;
/// only those with `status` when given, only those where `member` sits when
/// given; private tables only when `viewer` created them or sits there.
#[tracing::instrument(skip(executor))]
pub async fn list(
    executor: impl PgExecutor<'_>,
    status: Option<Status>,
    member: Option<Uuid>,
    viewer: Uuid,
    after: Option<(DateTime<Utc>, Uuid)>,
    limit: i64,
) -> Result<Vec<ListedTable>, sqlx::Error> {
    let (after_at, after_id) = after.unzip();
    let rows = sqlx::query_as!(
        ListedRow,
        r#"SELECT t.id, t.ruleset, t.status, t.seats, t.version, t.created_by, t.created_at,
                  t.visibility
           FROM game_tables t
           WHERE ($1::text IS NULL OR t.status = $1)
             AND ($2::uuid IS NULL OR EXISTS (
                   SELECT 1 FROM table_players p WHERE p.table_id = t.id AND p.account_id = $2))
             AND ($3::timestamptz IS NULL OR (t.created_at, t.id) > ($3, $4::uuid))
             AND (t.visibility = 'public' OR t.created_by = $6 OR EXISTS (
                   SELECT 1 FROM table_players p WHERE p.table_id = t.id AND p.account_id = $6))
           ORDER BY t.created_at, t.id
           LIMIT $5"#,
        status.map(Status::as_str),
        member,
        after_at,
        after_id,
        limit,
        viewer,
    )
    .fetch_all(executor)
    .await?;
    rows.into_iter().map(ListedTable::try_from).collect()
}

/// A seated player, as projected.
#[derive(Debug, Clone)]
pub struct SeatRow {
    pub table_id: Uuid,
    pub seat: i32,
    pub account_id: Uuid,
    /// `None`: the account was erased.
    pub username: Option<String>,
}

/// The seated players of these tables, by table then seat.
#[tracing::instrument(skip(executor))]
pub async fn players_of(
    executor: impl PgExecutor<'_>,
    table_ids: &[Uuid],
) -> Result<Vec<SeatRow>, sqlx::Error> {
    sqlx::query_as!(
        SeatRow,
        r#"SELECT p.table_id, p.seat, p.account_id, a.username
           FROM table_players p JOIN accounts a ON a.id = p.account_id
           WHERE p.table_id = ANY($1)
           ORDER BY p.table_id, p.seat"#,
        table_ids,
    )
    .fetch_all(executor)
    .await
}

/// Counts a bot seated at a table (`strong`: of that level).
#[tracing::instrument(skip(conn))]
pub async fn add_bot(conn: &mut PgConnection, id: Uuid, strong: bool) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE game_tables SET bots = bots + 1, strong_bots = strong_bots + $2::int WHERE id = $1",
        id,
        i32::from(strong),
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// What one person runs at once, as [`bots_run_by`] counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BotsRun {
    pub account_id: Uuid,
    pub strong_tables: i64,
    pub bots: i64,
}

/// The bots that the persons seated at `table_id` (only those of `only`,
/// when given) each run: over the tables they sit at that are playing, and
/// `table_id` itself, the bots seated there and the tables with a strong
/// one; over the quick-play tables they wait at that will seat bots (a
/// waiting table is due only for quick play's bots, `bots_after`), their
/// empty seats too. Their account rows are locked first, in order, so that
/// two tables one person plays at are not counted at once and each misses
/// the other's bots.
#[tracing::instrument(skip(conn))]
pub async fn bots_run_by(
    conn: &mut PgConnection,
    table_id: Uuid,
    only: Option<&[Uuid]>,
) -> Result<Vec<BotsRun>, sqlx::Error> {
    sqlx::query!(
        r#"SELECT a.id FROM accounts a
           WHERE a.id IN (SELECT account_id FROM table_players WHERE table_id = $1)
             AND ($2::uuid[] IS NULL OR a.id = ANY($2))
           ORDER BY a.id FOR NO KEY UPDATE"#,
        table_id,
        only as Option<&[Uuid]>,
    )
    .fetch_all(&mut *conn)
    .await?;
    sqlx::query_as!(
        BotsRun,
        r#"SELECT p.account_id AS "account_id!",
                  count(*) FILTER (WHERE g.strong_bots > 0) AS "strong_tables!",
                  coalesce(sum(g.bots + CASE WHEN g.status = 'waiting' AND g.due_at IS NOT NULL
                                             THEN g.seats - (SELECT count(*) FROM table_players q
                                                             WHERE q.table_id = g.id)
                                             ELSE 0 END), 0)::bigint AS "bots!"
           FROM table_players p
           JOIN table_players t ON t.account_id = p.account_id
           JOIN game_tables g ON g.id = t.table_id
           WHERE p.table_id = $1 AND ($2::uuid[] IS NULL OR p.account_id = ANY($2))
             AND (g.status = 'playing' OR g.id = $1
                  OR (g.status = 'waiting' AND g.due_at IS NOT NULL))
           GROUP BY p.account_id"#,
        table_id,
        only as Option<&[Uuid]>,
    )
    .fetch_all(conn)
    .await
}
