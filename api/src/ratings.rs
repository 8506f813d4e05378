//! Ratings and statistics per account and ruleset (docs/API.md "Finding a
//! game and coming back"), kept from the games' logs:
//!
//! - [`record`]: a game between people that ends is rated in the
//!   transaction that appends its end, in its ruleset's order (the
//!   `game_ended` event's `at`, then the table's id), one transaction at a
//!   time per ruleset. One that ended before a game rated already (two games
//!   ending within moments, committed the other way round) re-rates that
//!   later game too: what is stored is always the fold of the games in
//!   order. A correction of a game's result (`result_corrected`) rates it
//!   again in its place, as corrected or not at all, and every later game
//!   of its ruleset with it.
//! - Ratings never hold a move back: a game that ends while another
//!   transaction holds its ruleset's lock (a correction re-rating
//!   thousands of later games, a rebuild) is noted in the move's
//!   transaction instead ([`store::ratings::defer`]), and [`rate_deferred`]
//!   (the rater, [`spawn`]) rates it in its place as soon as the lock is
//!   free, as its log says it counts then.
//! - [`rebuild`]: `huit ratings rebuild` reads the finished games' logs
//!   alone, folds them in that order (`domain::Standings`), compares with
//!   what is stored, bit for bit, and writes them anew.
//!
//! What counts and how a rating moves are the engine's (`domain::rating`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use domain::{PlayerId, Preset, RatedGame, Rating, Standing, Standings, TableEvent};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use store::ratings::{self as stored, ResultRow, StandingRow};

/// A rated game and where it stands in its ruleset's order.
#[derive(Debug, Clone, PartialEq)]
pub struct Ended {
    pub table_id: Uuid,
    pub at: DateTime<Utc>,
    pub game: RatedGame,
}

/// Why ratings could not be kept.
#[derive(Debug, thiserror::Error)]
pub enum RatingError {
    #[error(transparent)]
    Database(#[from] sqlx::Error),
    /// A log or a stored row says something that cannot be.
    #[error("{0}")]
    Corrupt(String),
}

/// What a committed append does to the ratings.
#[derive(Debug, Clone, PartialEq)]
pub enum Rerate {
    /// A rated game ended.
    Ended(Ended),
    /// The result of the game of `table_id` (of `ruleset`) was corrected:
    /// it is rated as `game` now, or not at all (voided).
    Corrected {
        table_id: Uuid,
        ruleset: String,
        game: Option<RatedGame>,
    },
}

/// Rates what `change` says in `conn`'s transaction (the one appending
/// it), and every game of its ruleset that comes after it in the order:
/// their results with the ratings before and after, and the players'
/// standings. A correction re-rates the game as if it had ended so.
#[tracing::instrument(skip(conn, change))]
pub async fn record(conn: &mut PgConnection, change: &Rerate) -> Result<(), RatingError> {
    match change {
        Rerate::Ended(ended) => {
            let (id, at, ruleset) = (ended.table_id, ended.at, &ended.game.ruleset);
            if !stored::try_lock(&mut *conn, ruleset).await? {
                tracing::info!(table_id = %id, ruleset, "ratings busy: the game's rating deferred");
                return Ok(stored::defer(&mut *conn, id, ruleset).await?);
            }
            rerate(conn, id, ruleset, at, Some(&ended.game)).await
        }
        Rerate::Corrected {
            table_id,
            ruleset,
            game,
        } => {
            let at = stored::game_ended_at(&mut *conn, *table_id)
                .await?
                .ok_or_else(|| RatingError::Corrupt(format!("table {table_id}: no game_ended")))?;
            stored::lock(&mut *conn, ruleset).await?;
            rerate(conn, *table_id, ruleset, at, game.as_ref()).await
        }
    }
}

/// Rates the game of `table_id`, which ended at `at`, as `game` (or not at
/// all) in place of what was stored of it, then every game of `ruleset`
/// that comes after it (usually none), from the ratings just before it;
/// the caller holds the ruleset's lock.
async fn rerate(
    conn: &mut PgConnection,
    table_id: Uuid,
    ruleset: &str,
    at: DateTime<Utc>,
    game: Option<&RatedGame>,
) -> Result<(), RatingError> {
    let was = games_of(&stored::results_of(&mut *conn, table_id).await?)?.pop();
    if was.is_none() && game.is_none() {
        // Not rated before, nor now (a game with a bot, voided twice).
        return Ok(());
    }
    let later = stored::results_after(&mut *conn, ruleset, at, table_id).await?;
    let now = game.map(|game| Ended {
        table_id,
        at,
        game: game.clone(),
    });
    let games: Vec<Ended> = now.into_iter().chain(games_of(&later)?).collect();
    let mut everyone = BTreeSet::new();
    for f in games.iter().chain(&was).flat_map(|g| &g.game.finishes) {
        everyone.insert(account(&f.player)?);
    }
    let everyone: Vec<Uuid> = everyone.into_iter().collect();
    let before = stored::ratings_before(&mut *conn, &everyone, ruleset, at, table_id).await?;
    let mut standings = Standings::default();
    for (id, mu, sigma) in before {
        let standing = Standing {
            rating: Rating { mu, sigma },
            ..Standing::default()
        };
        let key = (domain_id(id), ruleset.to_owned());
        standings.by_player.insert(key, standing);
    }
    let results = fold(&mut standings, &games)?;
    if was.is_some() {
        stored::forget_game(&mut *conn, table_id).await?;
    }
    if game.is_some() {
        stored::insert_games(&mut *conn, &[(table_id, ruleset.to_owned(), at)]).await?;
    }
    stored::write_results(&mut *conn, &results).await?;
    // Ratings as they end up; counts: this game's as rated now, less as it
    // was rated (the later games' were counted when they were rated).
    let counted = |g: Option<&RatedGame>, player: &PlayerId| {
        let mut counted = domain::Stats::default();
        if let Some(f) = g.and_then(|g| g.finishes.iter().find(|f| &f.player == player)) {
            counted.add(f);
        }
        counted
    };
    let mut changes = Vec::with_capacity(everyone.len());
    for &id in &everyone {
        let player = domain_id(id);
        let (now, was) = (
            counted(game, &player),
            counted(was.as_ref().map(|e| &e.game), &player),
        );
        let rating = standings.of(&player, ruleset).rating;
        changes.push(StandingRow {
            account_id: id,
            ruleset: ruleset.to_owned(),
            mu: rating.mu,
            sigma: rating.sigma,
            games: now.games as i64 - was.games as i64,
            wins: now.wins as i64 - was.wins as i64,
            places: now.places as i64 - was.places as i64,
            points: now.points - was.points,
        });
    }
    stored::add_standings(&mut *conn, &changes).await?;
    if was.is_some() {
        stored::forget_unrated(conn, ruleset, &everyone).await?;
    }
    Ok(())
}

/// Folds `games` (in order) into `standings`: each player's result with
/// their rating before and after.
fn fold(standings: &mut Standings, games: &[Ended]) -> Result<Vec<ResultRow>, RatingError> {
    let mut rows = Vec::new();
    for ended in games {
        let changes = standings.add(&ended.game);
        for (seat, (f, (before, after))) in ended.game.finishes.iter().zip(changes).enumerate() {
            rows.push(ResultRow {
                table_id: ended.table_id,
                account_id: account(&f.player)?,
                ruleset: ended.game.ruleset.clone(),
                ended_at: ended.at,
                seat: seat as i32,
                place: f.place as i32,
                total: f.total,
                won: f.won,
                mu_before: before.mu,
                sigma_before: before.sigma,
                mu_after: after.mu,
                sigma_after: after.sigma,
            });
        }
    }
    Ok(rows)
}

/// Stored results (in the order of the games, each game's by seat) as the
/// rated games they were.
fn games_of(rows: &[ResultRow]) -> Result<Vec<Ended>, RatingError> {
    let mut games: Vec<Ended> = Vec::new();
    for r in rows {
        let finish = domain::Finish {
            player: domain_id(r.account_id),
            place: usize::try_from(r.place).map_err(|_| corrupt_row(r))?,
            total: r.total,
            won: r.won,
        };
        match games.last_mut() {
            Some(game) if game.table_id == r.table_id => game.game.finishes.push(finish),
            _ => games.push(Ended {
                table_id: r.table_id,
                at: r.ended_at,
                game: RatedGame {
                    ruleset: r.ruleset.clone(),
                    finishes: vec![finish],
                },
            }),
        }
    }
    Ok(games)
}

fn corrupt_row(r: &ResultRow) -> RatingError {
    RatingError::Corrupt(format!("a stored result cannot be: {r:?}"))
}

fn account(player: &PlayerId) -> Result<Uuid, RatingError> {
    player
        .as_str()
        .parse()
        .map_err(|_| RatingError::Corrupt(format!("{player} is not an account")))
}

fn domain_id(account: Uuid) -> PlayerId {
    PlayerId::from(account.to_string())
}

fn standing_row(account_id: Uuid, ruleset: &str, s: &Standing) -> StandingRow {
    StandingRow {
        account_id,
        ruleset: ruleset.to_owned(),
        mu: s.rating.mu,
        sigma: s.rating.sigma,
        games: s.stats.games as i64,
        wins: s.stats.wins as i64,
        places: s.stats.places as i64,
        points: s.stats.points,
    }
}

/// How many finished tables' logs are read at once (whole logs: a few
/// hundred events each).
const TABLES_A_PAGE: i64 = 200;
/// How many rows are written in one statement.
const ROWS_A_STATEMENT: usize = 10_000;

/// What [`rebuild`] found.
#[derive(Debug, Clone, Default)]
pub struct Rebuilt {
    /// Finished tables read.
    pub tables: usize,
    /// Rated games among them.
    pub games: usize,
    /// Standings made.
    pub standings: usize,
    /// Where the stored values differ from those of the logs (the first
    /// few), and how many do.
    pub differences: Vec<String>,
    pub different: usize,
}

/// Recomputes every rating and statistic from the finished games' logs
/// alone, folded in the order the games ended, and compares them with
/// the stored values, bit for bit. With `write`, the stored values are
/// replaced by these (every ruleset's rating held meanwhile: games that end
/// wait); without, nothing is written, and the comparison is of one
/// snapshot. `progress` is told the tables read so far.
pub async fn rebuild(
    pool: &PgPool,
    write: bool,
    mut progress: impl FnMut(usize),
) -> Result<Rebuilt, RatingError> {
    let mut tx = pool.begin().await?;
    if write {
        let mut rulesets: Vec<&str> = Preset::ALL.iter().map(|p| p.id()).collect();
        rulesets.sort_unstable();
        for ruleset in rulesets {
            stored::lock(&mut tx, ruleset).await?;
        }
    } else {
        store::connection::snapshot(&mut tx).await?;
    }
    let (mut games, tables) = read_games(&mut tx, &mut progress).await?;
    games.sort_by_key(|g| (g.at, g.table_id));
    let mut standings = Standings::default();
    let results = fold(&mut standings, &games)?;
    let mut standing_rows = standings
        .by_player
        .iter()
        .map(|((player, ruleset), s)| Ok(standing_row(account(player)?, ruleset, s)))
        .collect::<Result<Vec<_>, RatingError>>()?;
    // An erased account's results stay (the games after them rate the
    // same), its standing does not.
    let everyone: Vec<Uuid> = standing_rows.iter().map(|r| r.account_id).collect();
    let erased: BTreeSet<Uuid> = store::accounts::erased_among(&mut *tx, &everyone)
        .await?
        .into_iter()
        .collect();
    standing_rows.retain(|r| !erased.contains(&r.account_id));
    let mut rebuilt = Rebuilt {
        tables,
        games: games.len(),
        standings: standing_rows.len(),
        ..Rebuilt::default()
    };
    compare(
        &mut rebuilt,
        &results,
        &stored::all_results(&mut *tx).await?,
        result_bits,
    );
    compare(
        &mut rebuilt,
        &standing_rows,
        &stored::all_standings(&mut *tx).await?,
        standing_bits,
    );
    if write {
        stored::clear(&mut tx).await?;
        let placed: Vec<_> = games
            .iter()
            .map(|g| (g.table_id, g.game.ruleset.clone(), g.at))
            .collect();
        for chunk in placed.chunks(ROWS_A_STATEMENT) {
            stored::insert_games(&mut *tx, chunk).await?;
        }
        for chunk in results.chunks(ROWS_A_STATEMENT) {
            stored::write_results(&mut *tx, chunk).await?;
        }
        for chunk in standing_rows.chunks(ROWS_A_STATEMENT) {
            stored::add_standings(&mut *tx, chunk).await?;
        }
    }
    tx.commit().await?;
    Ok(rebuilt)
}

/// The rated games of every finished table's log, and how many tables
/// were read.
async fn read_games(
    tx: &mut PgConnection,
    progress: &mut impl FnMut(usize),
) -> Result<(Vec<Ended>, usize), RatingError> {
    let (mut games, mut tables, mut after) = (Vec::new(), 0, None);
    loop {
        let page = stored::finished_tables(&mut *tx, after, TABLES_A_PAGE).await?;
        let Some(last) = page.last() else {
            return Ok((games, tables));
        };
        after = Some(*last);
        tables += page.len();
        games.extend(rated_in(stored::rating_events(&mut *tx, &page).await?)?);
        progress(tables);
    }
}

/// The rated games of the logs of `events` (those of some tables, each
/// table's in order), as their logs count them now.
pub fn rated_in(events: Vec<stored::RatingEvent>) -> Result<Vec<Ended>, RatingError> {
    let mut by_table: HashMap<Uuid, (Vec<TableEvent>, Option<DateTime<Utc>>)> = HashMap::new();
    for e in events {
        let event =
            TableEvent::read(&e.kind, u32::try_from(e.v).unwrap_or(0), &e.data).map_err(|why| {
                RatingError::Corrupt(format!(
                    "table {}: {} unreadable: {why}",
                    e.table_id, e.kind
                ))
            })?;
        let (log, ended_at) = by_table.entry(e.table_id).or_default();
        if e.kind == "game_ended" {
            *ended_at = Some(e.at);
        }
        log.push(event);
    }
    let mut games = Vec::new();
    for (table_id, (log, ended_at)) in by_table {
        if let (Some(game), Some(at)) = (RatedGame::from_log(&log), ended_at) {
            games.push(Ended { table_id, at, game });
        }
    }
    Ok(games)
}

/// Games noted by the rater in one pass, at most.
const DEFERRED_A_PASS: i64 = 100;

/// One pass of the rater: each game whose rating a move deferred is rated
/// in its place, as its log counts it now (a correction appended meanwhile
/// included), in a transaction of its own that waits for its ruleset's
/// lock; how many.
pub async fn rate_deferred(pool: &PgPool) -> Result<usize, RatingError> {
    let deferred = stored::deferred(pool, DEFERRED_A_PASS).await?;
    for (table_id, ruleset) in &deferred {
        let mut tx = pool.begin().await?;
        stored::lock(&mut tx, ruleset).await?;
        if !stored::take_deferred(&mut *tx, *table_id).await? {
            continue;
        }
        let events = stored::rating_events(&mut *tx, &[*table_id]).await?;
        let game = rated_in(events)?.pop().map(|e| e.game);
        let change = Rerate::Corrected {
            table_id: *table_id,
            ruleset: ruleset.clone(),
            game,
        };
        record(&mut tx, &change).await?;
        tx.commit().await?;
    }
    Ok(deferred.len())
}

/// Runs the rater every `every`, until the runtime stops.
pub fn spawn(pool: PgPool, every: std::time::Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if let Err(e) = rate_deferred(&pool).await {
                tracing::warn!(error = %e, "the rater's pass failed; the next one tries again");
            }
        }
    })
}

/// A result's identity, and its bits (its floats as their IEEE 754 bits).
fn result_bits(r: &ResultRow) -> ((Uuid, Uuid), impl PartialEq + std::fmt::Debug) {
    let floats = [r.mu_before, r.sigma_before, r.mu_after, r.sigma_after].map(f64::to_bits);
    let at = (r.ruleset.clone(), r.ended_at);
    (
        (r.table_id, r.account_id),
        (at, r.seat, r.place, r.total, r.won, floats),
    )
}

/// A standing's identity, and its bits.
fn standing_bits(s: &StandingRow) -> ((Uuid, String), impl PartialEq + std::fmt::Debug) {
    let counts = [s.games, s.wins, s.places, s.points];
    let floats = [s.mu, s.sigma].map(f64::to_bits);
    ((s.account_id, s.ruleset.clone()), (floats, counts))
}

/// How many of the rows computed and stored differ (missing from either
/// side, or not the same to the bit), and the first few, in `rebuilt`.
fn compare<R: std::fmt::Debug, K: Ord, B: PartialEq>(
    rebuilt: &mut Rebuilt,
    computed: &[R],
    stored: &[R],
    bits: impl Fn(&R) -> (K, B),
) {
    const SHOWN: usize = 10;
    let mut sides: BTreeMap<K, [Option<&R>; 2]> = BTreeMap::new();
    for (side, rows) in [computed, stored].into_iter().enumerate() {
        for row in rows {
            sides.entry(bits(row).0).or_default()[side] = Some(row);
        }
    }
    for [c, s] in sides.into_values() {
        if c.map(|r| bits(r).1) != s.map(|r| bits(r).1) {
            rebuilt.different += 1;
            if rebuilt.differences.len() < SHOWN {
                rebuilt
                    .differences
                    .push(format!("from the logs: {c:?}; stored: {s:?}"));
            }
        }
    }
}
