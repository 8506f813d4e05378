//! PostgreSQL's CPU per append statement of the log writer, by batch size:
//! the product's statement ([`store::events::insert_batch`]) on a
//! connection set up like the writer's ([`store::held::Held`]), each
//! move two events like a card played and the next turn, the table then
//! waiting for its next seat's account, who is told so in their feed (a
//! `your_turn` item, as a real move writes). The figures are
//! the CPU time of the one PostgreSQL backend that runs them (user and
//! system, from `/proc`), so the database must run on this machine. Unlike
//! a wall-clock figure, a process's CPU time barely moves when the VM is
//! starved, which makes small changes to the statement measurable.

use std::time::Instant;

use domain::{Due, Notice, NoticeKind};
use rand::Rng;
use serde_json::json;
use sqlx::PgConnection;
use store::events;
use store::held::Held;
use store::{self, accounts::Role};
use store::{ChainedAppend, NewEvent};
use uuid::Uuid;

use crate::load::measure::{ProcStat, USER_HZ};
use crate::Error;

/// Writes `moves` moves to `tables` new tables for each batch size, then
/// prints PostgreSQL's CPU per statement and per move.
pub async fn run(
    database_url: &str,
    sizes: &[usize],
    moves: usize,
    tables: usize,
) -> Result<(), Error> {
    if let Some(&size) = sizes.iter().find(|&&s| s == 0 || s > tables) {
        return Err(
            format!("a batch of {size} moves: batches hold 1 to {tables} distinct tables").into(),
        );
    }
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect(database_url)
        .await?;
    store::MIGRATOR.run(&pool).await?;
    let name = format!("append_cost_{:08x}", rand::thread_rng().gen::<u32>());
    // The players of every table, the first its creator.
    let mut seated = Vec::with_capacity(SEATS);
    for i in 0..SEATS {
        let name = format!("{name}_{i}");
        let account =
            store::accounts::insert(&pool, &name, "not a password hash", Role::Player).await?;
        seated.push(account.id);
    }
    let mut heads = Vec::with_capacity(tables);
    let mut conn = Held::new(&pool).take().await?;
    for _ in 0..tables {
        let id = Uuid::new_v4();
        store::tables::insert(&pool, id, "classique", seated[0]).await?;
        for (seat, &player) in seated.iter().enumerate() {
            store::players::insert(&mut conn, id, player, seat as i32).await?;
        }
        heads.push((id, 0_i64, store::chain::GENESIS_PREV_HASH.to_owned()));
    }
    let backend: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut conn)
        .await?;
    backend_cpu(backend).map_err(|e| {
        format!("the CPU time of PostgreSQL's backend {backend} (is the database on this machine?): {e}")
    })?;

    // For scale: one row inserted and committed alone, as the baseline does
    // (in a table of its own: a temporary one would not be flushed to disk).
    let reference = format!("{name}_reference");
    sqlx::query(&format!("CREATE TABLE {reference} (n bigint)"))
        .execute(&mut conn)
        .await?;
    let insert = format!("INSERT INTO {reference} VALUES ($1)");
    let before = backend_cpu(backend)?;
    for n in 0..moves as i64 {
        sqlx::query(&insert).bind(n).execute(&mut conn).await?;
    }
    let cpu = backend_cpu(backend)? - before;
    sqlx::query(&format!("DROP TABLE {reference}"))
        .execute(&mut conn)
        .await?;
    println!(
        "append-cost: a one-row insert committed alone: {:.0} us of PostgreSQL CPU",
        cpu * 1e6 / moves as f64
    );

    for &size in sizes {
        let statements = moves.div_ceil(size);
        let before = backend_cpu(backend)?;
        let started = Instant::now();
        let mut next = 0;
        for _ in 0..statements {
            let batch: Vec<ChainedAppend> = (0..size)
                .map(|_| {
                    let (id, version, prev_hash) = &mut heads[next % tables];
                    next += 1;
                    let next_seat = seated[(next + 1) % SEATS];
                    let chained = ChainedAppend::new(*id, *version, prev_hash, a_move(next), None)
                        .with_turn(Some(next_seat))
                        .with_notices(
                            vec![Notice {
                                kind: NoticeKind::YourTurn,
                                player: next_seat.to_string().into(),
                            }],
                            Due::Keep,
                        );
                    *version = chained.new_version();
                    *prev_hash = chained.events.last().expect("two events").hash.clone();
                    chained
                })
                .collect();
            append(&mut conn, &batch).await?;
        }
        let cpu = backend_cpu(backend)? - before;
        let wall = started.elapsed().as_secs_f64();
        let written = (statements * size) as f64;
        println!(
            "append-cost: size={size} statements={statements} cpu_us_per_statement={:.0} cpu_us_per_move={:.0} wall_us_per_move={:.0}",
            cpu * 1e6 / statements as f64,
            cpu * 1e6 / written,
            wall * 1e6 / written,
        );
    }
    Ok(())
}

/// One statement; every table of it must have moved.
async fn append(conn: &mut PgConnection, batch: &[ChainedAppend]) -> Result<(), Error> {
    let refs: Vec<&ChainedAppend> = batch.iter().collect();
    let done = events::insert_batch(conn, &refs, store::feed::Outbox::OFF).await?;
    if done.iter().any(|d| *d != events::Appended::Stored) {
        return Err("a table of the batch was not at its version".into());
    }
    Ok(())
}

/// Seats at each table.
const SEATS: usize = 4;

/// The events of the `n`th move, the size of a real one's.
fn a_move(n: usize) -> Vec<NewEvent> {
    let seat = n % SEATS;
    vec![
        NewEvent::new(
            "card_played",
            1,
            json!({"seat": seat, "card": "8H", "suit": null, "announce": false}),
        ),
        NewEvent::new(
            "turn_started",
            1,
            json!({"seat": (seat + 1) % SEATS, "turn": n, "pending": {"kind": "none"}}),
        ),
    ]
}

/// The CPU time (user and system) of process `pid` so far, in seconds.
fn backend_cpu(pid: i32) -> Result<f64, Error> {
    let stat = u32::try_from(pid)
        .ok()
        .and_then(ProcStat::of)
        .ok_or("no readable /proc/<pid>/stat")?;
    Ok(stat.ticks as f64 / USER_HZ)
}
