//! `rated_games`, `rated_results` and `ratings` (migration 12): the rated
//! games in the order they ended, what each person took from each, and
//! every account's standing per ruleset; written by the transaction that
//! appends a game's end (`api::ratings::record`) or all at once by
//! `huit ratings rebuild`; read by the players' profiles and the
//! leaderboards.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgExecutor};
use uuid::Uuid;

/// One person's result in one rated game, with their rating before and
/// after it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultRow {
    pub table_id: Uuid,
    pub account_id: Uuid,
    pub ruleset: String,
    pub ended_at: DateTime<Utc>,
    pub seat: i32,
    pub place: i32,
    pub total: i32,
    pub won: bool,
    pub mu_before: f64,
    pub sigma_before: f64,
    pub mu_after: f64,
    pub sigma_after: f64,
}

/// One of an account's rated games, as its public page shows it: the
/// table is named only when it is public.
#[derive(Debug, Clone, PartialEq)]
pub struct RecentResult {
    pub table_id: Option<Uuid>,
    pub ruleset: String,
    pub ended_at: DateTime<Utc>,
    pub place: i32,
    pub total: i32,
    pub won: bool,
    pub mu_before: f64,
    pub mu_after: f64,
}

/// An account's standing in a ruleset as stored; as a change (see
/// [`add_standings`]), its counts are what to add.
#[derive(Debug, Clone, PartialEq)]
pub struct StandingRow {
    pub account_id: Uuid,
    pub ruleset: String,
    pub mu: f64,
    pub sigma: f64,
    pub games: i64,
    pub wins: i64,
    pub places: i64,
    pub points: i64,
}

/// Waits for, and holds until the transaction ends, the right to rate
/// games of `ruleset`: one transaction at a time per ruleset (callers that
/// take several take them in name order).
#[tracing::instrument(skip(conn))]
pub async fn lock(conn: &mut PgConnection, ruleset: &str) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "SELECT pg_advisory_xact_lock(hashtextextended('huit.ratings.' || $1, 0))",
        ruleset
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// The ruleset's lock, as [`lock`] takes it, if no other transaction holds
/// it: whether it was taken.
#[tracing::instrument(skip(conn))]
pub async fn try_lock(conn: &mut PgConnection, ruleset: &str) -> Result<bool, sqlx::Error> {
    let taken = sqlx::query_scalar!(
        r#"SELECT pg_try_advisory_xact_lock(hashtextextended('huit.ratings.' || $1, 0)) AS "taken!""#,
        ruleset
    )
    .fetch_one(conn)
    .await?;
    Ok(taken)
}

/// Notes that the game of `table_id` is to be rated by the rater (its
/// ruleset's lock was held by another transaction).
#[tracing::instrument(skip(executor))]
pub async fn defer(
    executor: impl PgExecutor<'_>,
    table_id: Uuid,
    ruleset: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO ratings_deferred (table_id, ruleset) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        table_id,
        ruleset,
    )
    .execute(executor)
    .await?;
    Ok(())
}

/// The games noted for the rater, oldest first (at most `limit`).
#[tracing::instrument(skip(executor))]
pub async fn deferred(
    executor: impl PgExecutor<'_>,
    limit: i64,
) -> Result<Vec<(Uuid, String)>, sqlx::Error> {
    let rows = sqlx::query!(
        "SELECT table_id, ruleset FROM ratings_deferred ORDER BY noted_at, table_id LIMIT $1",
        limit,
    )
    .fetch_all(executor)
    .await?;
    Ok(rows.into_iter().map(|r| (r.table_id, r.ruleset)).collect())
}

/// The rater takes the game of `table_id` off its list: `false` when
/// another process took it first.
#[tracing::instrument(skip(executor))]
pub async fn take_deferred(
    executor: impl PgExecutor<'_>,
    table_id: Uuid,
) -> Result<bool, sqlx::Error> {
    let taken = sqlx::query!("DELETE FROM ratings_deferred WHERE table_id = $1", table_id,)
        .execute(executor)
        .await?;
    Ok(taken.rows_affected() == 1)
}

/// The results of the games of `ruleset` that come after (`ended_at`,
/// `table_id`) in its order, in that order (each game's by seat).
#[tracing::instrument(skip(executor))]
pub async fn results_after(
    executor: impl PgExecutor<'_>,
    ruleset: &str,
    ended_at: DateTime<Utc>,
    table_id: Uuid,
) -> Result<Vec<ResultRow>, sqlx::Error> {
    sqlx::query_as!(
        ResultRow,
        r#"SELECT r.table_id, r.account_id, r.ruleset, r.ended_at, r.seat, r.place, r.total,
                  r.won, r.mu_before, r.sigma_before, r.mu_after, r.sigma_after
           FROM rated_games g JOIN rated_results r ON r.table_id = g.table_id
           WHERE g.ruleset = $1 AND (g.ended_at, g.table_id) > ($2, $3)
           ORDER BY g.ended_at, g.table_id, r.seat"#,
        ruleset,
        ended_at,
        table_id,
    )
    .fetch_all(executor)
    .await
}

/// The ratings (μ, σ) of `accounts` in `ruleset` just before (`ended_at`,
/// `table_id`) in its order: after the last game each played before it
/// (an account that played none there is absent).
#[tracing::instrument(skip(executor, accounts))]
pub async fn ratings_before(
    executor: impl PgExecutor<'_>,
    accounts: &[Uuid],
    ruleset: &str,
    ended_at: DateTime<Utc>,
    table_id: Uuid,
) -> Result<Vec<(Uuid, f64, f64)>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT a.id AS "account_id!", r.mu_after, r.sigma_after
           FROM unnest($1::uuid[]) AS a(id)
           CROSS JOIN LATERAL (
               SELECT mu_after, sigma_after FROM rated_results
               WHERE account_id = a.id AND ruleset = $2 AND (ended_at, table_id) < ($3, $4)
               ORDER BY ended_at DESC, table_id DESC LIMIT 1) r"#,
        accounts,
        ruleset,
        ended_at,
        table_id,
    )
    .fetch_all(executor)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| (r.account_id, r.mu_after, r.sigma_after))
        .collect())
}

/// Writes results: new ones, or new ratings before and after for results
/// already stored (a later game re-rated).
#[tracing::instrument(skip(executor, rows), fields(rows = rows.len()))]
pub async fn write_results(
    executor: impl PgExecutor<'_>,
    rows: &[ResultRow],
) -> Result<(), sqlx::Error> {
    let col = |f: fn(&ResultRow) -> f64| rows.iter().map(f).collect::<Vec<f64>>();
    sqlx::query!(
        r#"INSERT INTO rated_results (table_id, account_id, ruleset, ended_at, seat, place, total,
                                      won, mu_before, sigma_before, mu_after, sigma_after)
           SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[],
                                $5::int[], $6::int[], $7::int[], $8::bool[],
                                $9::float8[], $10::float8[], $11::float8[], $12::float8[])
           ON CONFLICT (table_id, account_id) DO UPDATE SET
               mu_before = EXCLUDED.mu_before, sigma_before = EXCLUDED.sigma_before,
               mu_after = EXCLUDED.mu_after, sigma_after = EXCLUDED.sigma_after"#,
        &rows.iter().map(|r| r.table_id).collect::<Vec<_>>(),
        &rows.iter().map(|r| r.account_id).collect::<Vec<_>>(),
        &rows.iter().map(|r| r.ruleset.clone()).collect::<Vec<_>>(),
        &rows.iter().map(|r| r.ended_at).collect::<Vec<_>>(),
        &rows.iter().map(|r| r.seat).collect::<Vec<_>>(),
        &rows.iter().map(|r| r.place).collect::<Vec<_>>(),
        &rows.iter().map(|r| r.total).collect::<Vec<_>>(),
        &rows.iter().map(|r| r.won).collect::<Vec<_>>(),
        &col(|r| r.mu_before),
        &col(|r| r.sigma_before),
        &col(|r| r.mu_after),
        &col(|r| r.sigma_after),
    )
    .execute(executor)
    .await?;
    Ok(())
}

/// Sets each account's rating in a ruleset to the row's, and adds the
/// row's counts to its own (a new standing starts from none; a correction's
/// may be negative); an erased account's row is left out (its results
/// stay, nameless, so that the games after them rate the same). Callers
/// hold the ruleset's lock ([`lock`]): one writer per standing.
#[tracing::instrument(skip(executor, rows), fields(rows = rows.len()))]
pub async fn add_standings(
    executor: impl PgExecutor<'_>,
    rows: &[StandingRow],
) -> Result<(), sqlx::Error> {
    let count = |f: fn(&StandingRow) -> i64| rows.iter().map(f).collect::<Vec<i64>>();
    sqlx::query!(
        r#"WITH u AS (
               SELECT u.* FROM unnest($1::uuid[], $2::text[], $3::float8[], $4::float8[],
                                      $5::int8[], $6::int8[], $7::int8[], $8::int8[])
                    AS u(account_id, ruleset, mu, sigma, games, wins, places, points)
               -- An erased account has no statistics.
               WHERE NOT EXISTS (SELECT 1 FROM accounts a
                                 WHERE a.id = u.account_id AND a.erased_at IS NOT NULL)),
           -- Counts added in place: an INSERT's ON CONFLICT would check a
           -- correction's negative counts as a new row's first.
           changed AS (
               UPDATE ratings r SET mu = u.mu, sigma = u.sigma,
                   games = r.games + u.games, wins = r.wins + u.wins,
                   places = r.places + u.places, points = r.points + u.points
               FROM u WHERE r.account_id = u.account_id AND r.ruleset = u.ruleset
               RETURNING r.account_id, r.ruleset)
           INSERT INTO ratings (account_id, ruleset, mu, sigma, games, wins, places, points)
           SELECT u.* FROM u
           WHERE NOT EXISTS (SELECT 1 FROM changed c
                             WHERE c.account_id = u.account_id AND c.ruleset = u.ruleset)"#,
        &rows.iter().map(|r| r.account_id).collect::<Vec<_>>(),
        &rows.iter().map(|r| r.ruleset.clone()).collect::<Vec<_>>(),
        &rows.iter().map(|r| r.mu).collect::<Vec<_>>(),
        &rows.iter().map(|r| r.sigma).collect::<Vec<_>>(),
        &count(|r| r.games),
        &count(|r| r.wins),
        &count(|r| r.places),
        &count(|r| r.points),
    )
    .execute(executor)
    .await?;
    Ok(())
}

/// An account's standings, every ruleset, by ruleset name.
#[tracing::instrument(skip(executor))]
pub async fn standings_of(
    executor: impl PgExecutor<'_>,
    account_id: Uuid,
) -> Result<Vec<StandingRow>, sqlx::Error> {
    sqlx::query_as!(
        StandingRow,
        r#"SELECT account_id, ruleset, mu, sigma, games, wins, places, points
           FROM ratings WHERE account_id = $1 ORDER BY ruleset"#,
        account_id,
    )
    .fetch_all(executor)
    .await
}

/// An account's last rated games, newest first: its result in each.
#[tracing::instrument(skip(executor))]
pub async fn recent_results(
    executor: impl PgExecutor<'_>,
    account_id: Uuid,
    limit: i64,
) -> Result<Vec<RecentResult>, sqlx::Error> {
    sqlx::query_as!(
        RecentResult,
        r#"SELECT CASE WHEN g.visibility = 'public' THEN r.table_id END AS table_id,
                  r.ruleset, r.ended_at, r.place, r.total, r.won, r.mu_before, r.mu_after
           FROM rated_results r JOIN game_tables g ON g.id = r.table_id
           WHERE r.account_id = $1
           ORDER BY r.ended_at DESC, r.table_id DESC LIMIT $2"#,
        account_id,
        limit,
    )
    .fetch_all(executor)
    .await
}

/// A leaderboard's entry: the account's name and standing.
#[derive(Debug, Clone, PartialEq)]
pub struct BoardRow {
    pub account_id: Uuid,
    pub username: String,
    pub mu: f64,
    pub sigma: f64,
    pub games: i64,
    pub wins: i64,
}

/// A page of `ruleset`'s leaderboard (established ratings, σ ≤ 6), best
/// first (ties: the greater account id first), after the cursor (the last
/// entry's μ and account), at most `limit`: a range of
/// `ratings_board_idx`, found by one row comparison (no `OR`, which a
/// generic plan could not turn into an index range).
#[tracing::instrument(skip(executor))]
pub async fn board(
    executor: impl PgExecutor<'_>,
    ruleset: &str,
    after: Option<(f64, Uuid)>,
    limit: i64,
) -> Result<Vec<BoardRow>, sqlx::Error> {
    // Before every finite rating: the first page.
    let (after_mu, after_id) = after.unwrap_or((f64::INFINITY, Uuid::max()));
    sqlx::query_as!(
        BoardRow,
        r#"SELECT r.account_id, a.username AS "username!", r.mu, r.sigma, r.games, r.wins
           FROM ratings r JOIN accounts a ON a.id = r.account_id
           WHERE r.ruleset = $1 AND r.sigma <= 6 AND (r.mu, r.account_id) < ($2, $3)
           ORDER BY r.mu DESC, r.account_id DESC
           LIMIT $4"#,
        ruleset,
        after_mu,
        after_id,
        limit,
    )
    .fetch_all(executor)
    .await
}

/// Up to `limit` finished tables after `after` (by id): where rated games
/// are looked for.
#[tracing::instrument(skip(executor))]
pub async fn finished_tables(
    executor: impl PgExecutor<'_>,
    after: Option<Uuid>,
    limit: i64,
) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT id FROM game_tables
           WHERE status = 'finished' AND ($1::uuid IS NULL OR id > $1)
           ORDER BY id LIMIT $2"#,
        after,
        limit,
    )
    .fetch_all(executor)
    .await
}

/// An event of a log that says whether and how its game is rated.
#[derive(Debug, Clone)]
pub struct RatingEvent {
    pub table_id: Uuid,
    pub kind: String,
    pub v: i32,
    pub at: DateTime<Utc>,
    /// As stored, parsed once by `TableEvent::read`.
    pub data: String,
}

/// These tables' whole logs, each table's in order: a rated game is read
/// from its creation, its start, its end and who acted in it (D43).
#[tracing::instrument(skip(executor, tables), fields(tables = tables.len()))]
pub async fn rating_events(
    executor: impl PgExecutor<'_>,
    tables: &[Uuid],
) -> Result<Vec<RatingEvent>, sqlx::Error> {
    sqlx::query_as!(
        RatingEvent,
        r#"SELECT table_id, type AS kind, v, at, data::text AS "data!" FROM events
           WHERE table_id = ANY($1)
           ORDER BY table_id, seq"#,
        tables,
    )
    .fetch_all(executor)
    .await
}

/// Every stored result.
#[tracing::instrument(skip(executor))]
pub async fn all_results(executor: impl PgExecutor<'_>) -> Result<Vec<ResultRow>, sqlx::Error> {
    sqlx::query_as!(
        ResultRow,
        r#"SELECT table_id, account_id, ruleset, ended_at, seat, place, total, won,
                  mu_before, sigma_before, mu_after, sigma_after
           FROM rated_results"#,
    )
    .fetch_all(executor)
    .await
}

/// Every stored standing.
#[tracing::instrument(skip(executor))]
pub async fn all_standings(executor: impl PgExecutor<'_>) -> Result<Vec<StandingRow>, sqlx::Error> {
    sqlx::query_as!(
        StandingRow,
        r#"SELECT account_id, ruleset, mu, sigma, games, wins, places, points
           FROM ratings"#,
    )
    .fetch_all(executor)
    .await
}

/// Forgets every rated game, result and standing (before they are written
/// again from the logs).
#[tracing::instrument(skip(conn))]
pub async fn clear(conn: &mut PgConnection) -> Result<(), sqlx::Error> {
    sqlx::query!("DELETE FROM rated_results")
        .execute(&mut *conn)
        .await?;
    sqlx::query!("DELETE FROM rated_games")
        .execute(&mut *conn)
        .await?;
    sqlx::query!("DELETE FROM ratings").execute(conn).await?;
    Ok(())
}

/// Places rated games in their rulesets' orders, many at once.
#[tracing::instrument(skip(executor, games), fields(games = games.len()))]
pub async fn insert_games(
    executor: impl PgExecutor<'_>,
    games: &[(Uuid, String, DateTime<Utc>)],
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        r#"INSERT INTO rated_games (table_id, ruleset, ended_at)
           SELECT * FROM unnest($1::uuid[], $2::text[], $3::timestamptz[])"#,
        &games.iter().map(|g| g.0).collect::<Vec<_>>(),
        &games.iter().map(|g| g.1.clone()).collect::<Vec<_>>(),
        &games.iter().map(|g| g.2).collect::<Vec<_>>(),
    )
    .execute(executor)
    .await?;
    Ok(())
}

/// The stored results of one rated game (by seat; none when the game is
/// not rated).
#[tracing::instrument(skip(executor))]
pub async fn results_of(
    executor: impl PgExecutor<'_>,
    table_id: Uuid,
) -> Result<Vec<ResultRow>, sqlx::Error> {
    sqlx::query_as!(
        ResultRow,
        r#"SELECT table_id, account_id, ruleset, ended_at, seat, place, total,
                  won, mu_before, sigma_before, mu_after, sigma_after
           FROM rated_results WHERE table_id = $1 ORDER BY seat"#,
        table_id,
    )
    .fetch_all(executor)
    .await
}

/// Takes a game out of its ruleset's order, with its results (a correction
/// rates it again, or voids it).
#[tracing::instrument(skip(conn))]
pub async fn forget_game(conn: &mut PgConnection, table_id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query!("DELETE FROM rated_results WHERE table_id = $1", table_id)
        .execute(&mut *conn)
        .await?;
    sqlx::query!("DELETE FROM rated_games WHERE table_id = $1", table_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Drops the standings in `ruleset` of those of `accounts` left with no
/// rated game (a correction voided their only one): a rebuild has none.
#[tracing::instrument(skip(executor, accounts))]
pub async fn forget_unrated(
    executor: impl PgExecutor<'_>,
    ruleset: &str,
    accounts: &[Uuid],
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "DELETE FROM ratings WHERE ruleset = $1 AND account_id = ANY($2) AND games = 0",
        ruleset,
        accounts,
    )
    .execute(executor)
    .await?;
    Ok(())
}

/// When the game of `table_id` ended (its `game_ended`'s time), if it did.
#[tracing::instrument(skip(executor))]
pub async fn game_ended_at(
    executor: impl PgExecutor<'_>,
    table_id: Uuid,
) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
    sqlx::query_scalar!(
        "SELECT at FROM events WHERE table_id = $1 AND type = 'game_ended'",
        table_id,
    )
    .fetch_optional(executor)
    .await
}

#[cfg(test)]
mod tests {
    /// `board`'s `sigma <= 6` and migration 12's partial index say what the
    /// engine says a provisional rating is.
    #[test]
    fn the_board_keeps_off_what_the_engine_calls_provisional() {
        assert_eq!(domain::rating::PROVISIONAL_ABOVE, 6.0);
    }
}
