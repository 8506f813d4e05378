//! Replay speed: how fast a table is rebuilt from its log in PostgreSQL, by
//! the product's own path (read the events page by page, parse them with the
//! engine, fold them).

use std::time::Instant;

use domain::{Status, Table, TableCommand, TableEvent};
use futures_util::TryStreamExt;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;
use sqlx::{PgPool, Row};
use store::chain::GENESIS_PREV_HASH;
use store::copy::{CopyRows, LogCopy};
use store::{self, accounts::Role};
use store::{ChainedAppend, EventData, EventRows, NewEvent};
use uuid::Uuid;

use crate::Error;

/// Appends `events` to a table at version `written` whose last event's hash
/// is `head` (moved to the new last one), inside the caller's transaction:
/// the benchmarks' way to write long logs fast. The new version.
pub async fn append_after(
    conn: &mut sqlx::PgConnection,
    table_id: Uuid,
    written: i64,
    head: &mut String,
    events: Vec<NewEvent>,
) -> Result<i64, Error> {
    let chained = ChainedAppend::new(table_id, written, head, events, None);
    store::events::insert_one(conn, &chained, store::feed::Outbox::OFF).await?;
    if let Some(last) = chained.events.last() {
        head.clone_from(&last.hash);
    }
    Ok(chained.new_version())
}

/// Writes a table of at least `events` events (a long classique game played
/// by seeded random moves), then rebuilds it from the database and prints
/// the figures.
pub async fn run(database_url: &str, events: usize, seed: u64) -> Result<(), Error> {
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .connect(database_url)
        .await?;
    store::MIGRATOR.run(&pool).await?;
    let mut rng = StdRng::seed_from_u64(seed);
    let name = format!("replay_{:08x}", rand::thread_rng().gen::<u32>());
    let account =
        store::accounts::insert(&pool, &name, "not a password hash", Role::Player).await?;
    let table_id = uuid::Uuid::new_v4();
    store::tables::insert(&pool, table_id, "classique", account.id).await?;

    let creator = api::table_service::player_id(account.id);
    let options = json!({"rounds": 1000, "target": 100000});
    let mut log = Table::create(
        "classique",
        options.as_object().expect("object"),
        4,
        None,
        &creator,
    )?;
    let mut table = Table::from_events(&log).expect("a new table");
    for _ in 1..4 {
        let cmd = TableCommand::Join {
            account_id: api::table_service::player_id(uuid::Uuid::new_v4()),
            joining: domain::Joining::Open,
            guest: false,
            client_seed: None,
        };
        log.extend(table.execute(&cmd, &mut rng)?);
    }
    log.extend(table.execute(
        &TableCommand::Start {
            account_id: creator,
        },
        &mut rng,
    )?);
    let mut written: i64 = 0;
    let mut head = GENESIS_PREV_HASH.to_owned();
    let started = Instant::now();
    while written < events as i64 && table.status() == Status::Playing {
        while log.len() < 2000 && table.status() == Status::Playing {
            let game = table.game.as_ref().expect("started");
            let seat = game
                .round()
                .and_then(|r| r.current)
                .expect("a seat on turn");
            let moves = game.legal_moves(seat);
            let mv = moves[rng.gen_range(0..moves.len())].clone();
            let account_id = table.players[seat]
                .as_ref()
                .expect("seated")
                .account_id
                .clone();
            log.extend(table.execute(&TableCommand::Move { account_id, mv }, &mut rng)?);
        }
        let batch: Vec<NewEvent> = log.drain(..).map(|e| NewEvent::sealed(&e)).collect();
        let mut tx = pool.begin().await?;
        written = append_after(&mut tx, table_id, written, &mut head, batch).await?;
        tx.commit().await?;
    }
    eprintln!(
        "replay-speed: wrote {written} events in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // The serving path: a process that has never seen the table folds its
    // whole log (read as data text, parsed, folded) on first use.
    let mut rates = Vec::new();
    for _ in 0..3 {
        let service =
            api::table_service::TableService::new(pool.clone(), api::log::hub::CommitHub::new());
        let t0 = Instant::now();
        let (n, rebuilt) = service
            .read(table_id, 0, |l| (l.version(), l.table.clone()))
            .await
            .map_err(|e| e.to_string())?;
        let secs = t0.elapsed().as_secs_f64();
        assert_eq!(
            rebuilt, table,
            "the rebuilt table is the one that was played"
        );
        println!(
            "replay: events={n} seconds={secs:.3} events_per_sec={:.0}",
            n as f64 / secs
        );
        rates.push(n as f64 / secs);
    }
    // Where the time goes: the rows alone (read, not parsed), then parsing
    // and folding alone (rows already in memory).
    let t0 = Instant::now();
    let rows = read_all_data(&pool, table_id).await?;
    let read_secs = t0.elapsed().as_secs_f64();
    let t0 = Instant::now();
    let copied = copy_all_data(&pool, table_id).await?;
    let copy_secs = t0.elapsed().as_secs_f64();
    assert_eq!(copied, rows, "COPY reads what the query reads");
    let t0 = Instant::now();
    let parsed: Vec<TableEvent> = rows.iter().map(|e| e.event()).collect::<Result<_, _>>()?;
    let parse_secs = t0.elapsed().as_secs_f64();
    let t0 = Instant::now();
    let folded = Table::from_events(&parsed).expect("a table log");
    let fold_secs = t0.elapsed().as_secs_f64();
    assert_eq!(folded, table);
    let n = rows.len() as f64;
    println!(
        "replay split: read_rows_events_per_sec={:.0} read_copy_events_per_sec={:.0} parse_events_per_sec={:.0} fold_events_per_sec={:.0}",
        n / read_secs,
        n / copy_secs,
        n / parse_secs,
        n / fold_secs
    );
    // The audit's path, for comparison: whole stored events (with hashes).
    let t0 = Instant::now();
    let stored = api::history::load(&pool, table_id)
        .await
        .map_err(|e| e.to_string())?;
    let parsed: Vec<TableEvent> = stored
        .events
        .iter()
        .map(api::history::parse)
        .collect::<Result<_, _>>()?;
    let _ = Table::from_events(&parsed).expect("a table log");
    println!(
        "replay (audit path, stored events with hashes): events={} events_per_sec={:.0}",
        stored.events.len(),
        stored.events.len() as f64 / t0.elapsed().as_secs_f64()
    );
    rates.sort_by(f64::total_cmp);
    println!("replay_events_per_sec={:.0}", rates[1]);
    Ok(())
}

/// Every event of a table as seq, type and data text, by one query: the
/// rows alone, to compare with a COPY.
async fn read_all_data(pool: &PgPool, table_id: Uuid) -> Result<EventRows, sqlx::Error> {
    let mut rows =
        sqlx::query("SELECT seq, type, v, data::text FROM events WHERE table_id = $1 ORDER BY seq")
            .bind(table_id)
            .fetch(pool);
    let mut out = EventRows::default();
    while let Some(row) = rows.try_next().await? {
        out.push(EventData {
            seq: row.try_get(0)?,
            kind: row.try_get(1)?,
            v: row.try_get(2)?,
            data: row.try_get(3)?,
        });
    }
    Ok(out)
}

/// The same by `COPY` (what a cold load reads), decoded and collected.
async fn copy_all_data(pool: &PgPool, table_id: Uuid) -> Result<EventRows, Error> {
    let mut log = LogCopy::begin(pool).await?;
    let mut chunks = log.data_after(table_id, 0).await?;
    let mut decoder = CopyRows::default();
    let mut out = EventRows::default();
    while let Some(chunk) = chunks.try_next().await? {
        decoder.feed(&chunk, &mut out)?;
    }
    drop(chunks);
    log.end().await?;
    Ok(out)
}
