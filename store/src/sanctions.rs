//! `sanctions` (docs/API.md "Corrections and sanctions"): an admin's
//! suspension or ban of an account, lifted or not, and the voiding of its
//! rated games that may come with it; and what admins read beside them,
//! the accounts a player sits with most.
//!
//! A log-in and a sanction are ordered by the account's row: a sanction
//! locks it (`FOR NO KEY UPDATE`, which the foreign keys of moves and feed
//! items to the account do not wait for) before it revokes the sessions, a
//! log-in `FOR SHARE` before it checks for a sanction and opens one. So no
//! session opened around a sanction outlives it.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgExecutor};
use uuid::Uuid;

/// A sanction as stored, with its admins' names.
#[derive(Debug, Clone)]
pub struct SanctionRow {
    pub id: Uuid,
    pub account_id: Uuid,
    /// `suspend` or `ban`.
    pub action: String,
    /// A suspension's end; `None`: a ban.
    pub until: Option<DateTime<Utc>>,
    pub reason: String,
    pub void_rated_games_since: Option<DateTime<Utc>>,
    pub games_voided: i32,
    pub voided_at: Option<DateTime<Utc>>,
    /// The admins' names; `None`: their account was erased (or, for
    /// `lifted_by`, not lifted).
    pub created_by: Option<String>,
    pub created_at: DateTime<Utc>,
    pub lifted_by: Option<String>,
    pub lifted_at: Option<DateTime<Utc>>,
}

/// A new sanction.
#[derive(Debug, Clone)]
pub struct NewSanction<'a> {
    pub account_id: Uuid,
    pub action: &'a str,
    pub until: Option<DateTime<Utc>>,
    pub reason: &'a str,
    pub void_rated_games_since: Option<DateTime<Utc>>,
    pub admin_id: Uuid,
}

/// Locks the account's row for a sanction (see the module's
/// documentation): `false` when there is no such account, or it was
/// erased.
#[tracing::instrument(skip(conn))]
pub async fn lock_for_sanction(
    conn: &mut PgConnection,
    account_id: Uuid,
) -> Result<bool, sqlx::Error> {
    let found = sqlx::query_scalar!(
        "SELECT username IS NOT NULL AS \"named!\" FROM accounts WHERE id = $1 FOR NO KEY UPDATE",
        account_id,
    )
    .fetch_optional(conn)
    .await?;
    Ok(found == Some(true))
}

/// Records a sanction (the account locked by [`lock_for_sanction`]).
#[tracing::instrument(skip(conn, new), fields(account_id = %new.account_id))]
pub async fn insert(conn: &mut PgConnection, new: NewSanction<'_>) -> Result<Uuid, sqlx::Error> {
    let id = Uuid::new_v4();
    sqlx::query!(
        r#"INSERT INTO sanctions
               (id, account_id, action, until, reason, void_rated_games_since, created_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7)"#,
        id,
        new.account_id,
        new.action,
        new.until,
        new.reason,
        new.void_rated_games_since,
        new.admin_id,
    )
    .execute(conn)
    .await?;
    Ok(id)
}

/// At a log-in, in its transaction: the account's row locked for share
/// (see the module's documentation), the sanction that refuses it, if one
/// stands: a ban first, else the suspension that ends last.
#[tracing::instrument(skip(conn))]
pub async fn refusing_log_in(
    conn: &mut PgConnection,
    account_id: Uuid,
) -> Result<Option<SanctionRow>, sqlx::Error> {
    sqlx::query!(
        "SELECT 1 AS one FROM accounts WHERE id = $1 FOR SHARE",
        account_id
    )
    .fetch_optional(&mut *conn)
    .await?;
    let id = sqlx::query_scalar!(
        r#"SELECT id FROM sanctions
           WHERE account_id = $1 AND lifted_at IS NULL AND (until IS NULL OR until > now())
           ORDER BY until DESC NULLS FIRST
           LIMIT 1"#,
        account_id,
    )
    .fetch_optional(&mut *conn)
    .await?;
    match id {
        None => Ok(None),
        Some(id) => get(conn, id).await,
    }
}

/// A sanction.
pub async fn get(
    executor: impl PgExecutor<'_>,
    id: Uuid,
) -> Result<Option<SanctionRow>, sqlx::Error> {
    Ok(select(executor, Some(id), None, 1).await?.pop())
}

/// The account's sanctions, newest first (the latest `limit`).
pub async fn of_account(
    executor: impl PgExecutor<'_>,
    account_id: Uuid,
    limit: i64,
) -> Result<Vec<SanctionRow>, sqlx::Error> {
    select(executor, None, Some(account_id), limit).await
}

/// The sanctions with the id `id` and of the account `account_id` (each
/// when given), newest first (at most `limit`).
#[tracing::instrument(skip(executor))]
async fn select(
    executor: impl PgExecutor<'_>,
    id: Option<Uuid>,
    account_id: Option<Uuid>,
    limit: i64,
) -> Result<Vec<SanctionRow>, sqlx::Error> {
    sqlx::query_as!(
        SanctionRow,
        r#"SELECT s.id, s.account_id, s.action, s.until, s.reason, s.void_rated_games_since,
                  s.games_voided, s.voided_at, c.username AS created_by, s.created_at,
                  l.username AS "lifted_by?", s.lifted_at
           FROM sanctions s
           JOIN accounts c ON c.id = s.created_by
           LEFT JOIN accounts l ON l.id = s.lifted_by
           WHERE ($1::uuid IS NULL OR s.id = $1) AND ($2::uuid IS NULL OR s.account_id = $2)
           ORDER BY s.created_at DESC, s.id
           LIMIT $3"#,
        id,
        account_id,
        limit,
    )
    .fetch_all(executor)
    .await
}

/// What lifting a sanction found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifted {
    Now,
    Already,
    NoSuchSanction,
}

/// `admin_id` lifts the sanction `id` of `account_id`.
#[tracing::instrument(skip(conn))]
pub async fn lift(
    conn: &mut PgConnection,
    account_id: Uuid,
    id: Uuid,
    admin_id: Uuid,
) -> Result<Lifted, sqlx::Error> {
    let lifted = sqlx::query_scalar!(
        r#"UPDATE sanctions SET lifted_by = $3, lifted_at = now()
           WHERE id = $1 AND account_id = $2 AND lifted_at IS NULL
           RETURNING id"#,
        id,
        account_id,
        admin_id,
    )
    .fetch_optional(&mut *conn)
    .await?;
    if lifted.is_some() {
        return Ok(Lifted::Now);
    }
    let exists = sqlx::query_scalar!(
        "SELECT id FROM sanctions WHERE id = $1 AND account_id = $2",
        id,
        account_id,
    )
    .fetch_optional(conn)
    .await?;
    Ok(match exists {
        Some(_) => Lifted::Already,
        None => Lifted::NoSuchSanction,
    })
}

/// A sanction whose voids are still to be done: its id, its account, the
/// admin who imposed it, and since when.
#[derive(Debug, Clone, Copy)]
pub struct PendingVoids {
    pub id: Uuid,
    pub account_id: Uuid,
    pub admin_id: Uuid,
    pub since: DateTime<Utc>,
}

/// The sanctions whose voids are not all done and that nobody holds (see
/// [`claim_voids`]), oldest first (at most `limit`).
#[tracing::instrument(skip(executor))]
pub async fn voids_pending(
    executor: impl PgExecutor<'_>,
    limit: i64,
) -> Result<Vec<PendingVoids>, sqlx::Error> {
    sqlx::query_as!(
        PendingVoids,
        r#"SELECT id, account_id, created_by AS admin_id,
                  void_rated_games_since AS "since!"
           FROM sanctions
           WHERE void_rated_games_since IS NOT NULL AND voided_at IS NULL
                 AND (voiding_until IS NULL OR voiding_until < now())
           ORDER BY created_at, id
           LIMIT $1"#,
        limit,
    )
    .fetch_all(executor)
    .await
}

/// Takes the sanction's voids for a minute (see the migration): `false`
/// when they are done, or another holds them.
#[tracing::instrument(skip(executor))]
pub async fn claim_voids(executor: impl PgExecutor<'_>, id: Uuid) -> Result<bool, sqlx::Error> {
    let claimed = sqlx::query!(
        r#"UPDATE sanctions SET voiding_until = now() + interval '1 minute'
           WHERE id = $1 AND void_rated_games_since IS NOT NULL AND voided_at IS NULL
                 AND (voiding_until IS NULL OR voiding_until < now())"#,
        id,
    )
    .execute(executor)
    .await?;
    Ok(claimed.rows_affected() == 1)
}

/// Lets go of the sanction's voids, not all done, for the next pass.
#[tracing::instrument(skip(executor))]
pub async fn release_voids(executor: impl PgExecutor<'_>, id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE sanctions SET voiding_until = NULL WHERE id = $1",
        id
    )
    .execute(executor)
    .await?;
    Ok(())
}

/// One more game voided by the sanction, in the transaction of its
/// correction; the voids are held a minute more.
#[tracing::instrument(skip(executor))]
pub async fn count_void(executor: impl PgExecutor<'_>, id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query!(
        r#"UPDATE sanctions
           SET games_voided = games_voided + 1, voiding_until = now() + interval '1 minute'
           WHERE id = $1"#,
        id,
    )
    .execute(executor)
    .await?;
    Ok(())
}

/// The sanction's voids are done.
#[tracing::instrument(skip(executor))]
pub async fn voids_done(executor: impl PgExecutor<'_>, id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query!(
        r#"UPDATE sanctions SET voided_at = now(), voiding_until = NULL
           WHERE id = $1 AND voided_at IS NULL"#,
        id,
    )
    .execute(executor)
    .await?;
    Ok(())
}

/// The account's rated games (rated as they stand: a voided one is no
/// longer rated) that ended at or after `since`, the latest first.
#[tracing::instrument(skip(executor))]
pub async fn rated_games_since(
    executor: impl PgExecutor<'_>,
    account_id: Uuid,
    since: DateTime<Utc>,
) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT table_id FROM rated_results
           WHERE account_id = $1 AND ended_at >= $2
           ORDER BY ended_at DESC, table_id DESC"#,
        account_id,
        since,
    )
    .fetch_all(executor)
    .await
}

/// An account a player sat with in rated games, and how each placed.
#[derive(Debug, Clone)]
pub struct PartnerRow {
    pub account_id: Uuid,
    /// `None`: the account was erased.
    pub username: Option<String>,
    pub games: i64,
    /// The player's wins and average place in those games.
    pub wins: i64,
    pub average_place: f64,
    /// The partner's.
    pub partner_wins: i64,
    pub partner_average_place: f64,
}

/// The accounts `account_id` sat with most in rated games (at most
/// `limit`, most games first).
#[tracing::instrument(skip(executor))]
pub async fn partners(
    executor: impl PgExecutor<'_>,
    account_id: Uuid,
    limit: i64,
) -> Result<Vec<PartnerRow>, sqlx::Error> {
    sqlx::query_as!(
        PartnerRow,
        r#"SELECT o.account_id, a.username,
                  count(*) AS "games!",
                  count(*) FILTER (WHERE me.won) AS "wins!",
                  avg(me.place)::float8 AS "average_place!",
                  count(*) FILTER (WHERE o.won) AS "partner_wins!",
                  avg(o.place)::float8 AS "partner_average_place!"
           FROM rated_results me
           JOIN rated_results o ON o.table_id = me.table_id AND o.account_id <> me.account_id
           JOIN accounts a ON a.id = o.account_id
           WHERE me.account_id = $1
           GROUP BY o.account_id, a.username
           ORDER BY count(*) DESC, o.account_id
           LIMIT $2"#,
        account_id,
        limit,
    )
    .fetch_all(executor)
    .await
}
