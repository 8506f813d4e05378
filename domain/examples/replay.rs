//! How fast a table's log is parsed and folded, without a database: the
//! engine's share of rebuilding a table from PostgreSQL (`scripts/bench`
//! prints the whole of it).
//!
//! `cargo run --release -p domain --example replay -- [--events N] [--runs R]`
//!
//! Plays one long seeded classique game of at least N events (by seeded
//! random moves), keeps its log as the stored `(type, data text)` pairs, then
//! times R times each: parsing them (`TableEvent::read`), folding the
//! parsed events (`Table::from_events`), and both. One line per run:
//! `events=<n> parse_events_per_sec=<x> fold_events_per_sec=<y> replay_events_per_sec=<z>`,
//! then the medians.

use std::time::Instant;

use clap::Parser;
use domain::{PlayerId, Status, Table, TableCommand, TableEvent, EVENT_VERSION};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Parser)]
struct Args {
    /// Events in the log (at least).
    #[arg(long, default_value_t = 100_000)]
    events: usize,
    /// Timed runs.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

fn main() {
    let args = Args::parse();
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let options = serde_json::json!({"rounds": 1000, "target": 100000});
    let creator = PlayerId::from("creator");
    let mut log = Table::create(
        "classique",
        options.as_object().expect("object"),
        4,
        None,
        &creator,
    )
    .expect("a table");
    let mut table = Table::from_events(&log).expect("a new table");
    for p in 1..4 {
        let join = TableCommand::Join {
            account_id: format!("player-{p}").into(),
            joining: domain::Joining::Open,
            guest: false,
            client_seed: None,
        };
        log.extend(table.execute(&join, &mut rng).expect("joins"));
    }
    let start = TableCommand::Start {
        account_id: creator,
    };
    log.extend(table.execute(&start, &mut rng).expect("starts"));
    while log.len() < args.events && table.status() == Status::Playing {
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
        let command = TableCommand::Move { account_id, mv };
        log.extend(table.execute(&command, &mut rng).expect("a legal move"));
    }
    let stored: Vec<(&'static str, String)> = log
        .iter()
        .map(|e| {
            (
                e.kind(),
                e.sealed_data(domain::Salt::draw(&mut rng)).to_string(),
            )
        })
        .collect();
    let n = stored.len() as f64;

    let (mut parse_rates, mut fold_rates, mut both_rates) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..args.runs {
        let t0 = Instant::now();
        let parsed: Vec<TableEvent> = stored
            .iter()
            .map(|(kind, data)| {
                TableEvent::read(kind, EVENT_VERSION, data).expect("a stored event")
            })
            .collect();
        let parse = t0.elapsed().as_secs_f64();
        let t0 = Instant::now();
        let folded = Table::from_events(&parsed).expect("a table log");
        let fold = t0.elapsed().as_secs_f64();
        assert_eq!(folded, table, "the fold rebuilds the table played");
        let t0 = Instant::now();
        let mut events = stored.iter().map(|(kind, data)| {
            TableEvent::read(kind, EVENT_VERSION, data).expect("a stored event")
        });
        let first = events.next().expect("table_created");
        let mut rebuilt = Table::from_events([&first]).expect("a table log");
        for event in events {
            rebuilt.evolve(&event);
        }
        let both = t0.elapsed().as_secs_f64();
        assert_eq!(rebuilt, table, "parse and fold rebuild the table played");
        println!(
            "events={} parse_events_per_sec={:.0} fold_events_per_sec={:.0} replay_events_per_sec={:.0}",
            stored.len(),
            n / parse,
            n / fold,
            n / both
        );
        parse_rates.push(n / parse);
        fold_rates.push(n / fold);
        both_rates.push(n / both);
    }
    println!(
        "median: parse_events_per_sec={:.0} fold_events_per_sec={:.0} replay_events_per_sec={:.0}",
        median(&mut parse_rates),
        median(&mut fold_rates),
        median(&mut both_rates)
    );
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}
