//! Seats one bot of level A against K−1 bots of level B and prints how often
//! A wins a round (goes out first; in placement scoring, finishes first).
//!
//! `cargo run --release -p domain --example arena -- --rounds N --preset P --players K --level A --vs B [--seed S] [--playouts N]`
//!
//! One line:
//! `arena preset=<p> players=<k> level=<a> vs=<b> rounds=<n> playouts=<n> win_share=<x> ci95_low=<l> ci95_high=<h> fair_share=<1/k> decide_p50_ms=<m> decide_p99_ms=<t>`
//! with a Wilson 95% interval, and the median and 99th percentile of A's
//! time per decision. `--playouts` is the search A is given when it
//! searches (`strong`; the server gives less under pressure, at least 500). A's seat changes every game, and games are played to their
//! end (a round that nobody wins, a blocked one, counts as not won).

use std::time::Instant;

use clap::Parser;
use domain::bots::{Level, Playouts};
use domain::{Command, Event, Game, Preset, Status};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

#[derive(Parser)]
struct Args {
    /// Rounds to play (across as many games as it takes).
    #[arg(long, default_value_t = 1000)]
    rounds: u64,
    /// The preset's id (classique, moderne, base, amerix, 757).
    #[arg(long, default_value = "classique")]
    preset: String,
    /// Players per table (clamped to what the preset allows).
    #[arg(long, default_value_t = 4)]
    players: usize,
    /// The level of the bot measured.
    #[arg(long, default_value = "basic")]
    level: Level,
    /// The level of the others.
    #[arg(long, default_value = "random")]
    vs: Level,
    /// First seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The playouts A's search is given (B's: the full search).
    #[arg(long, default_value_t = Playouts::FULL.get())]
    playouts: u32,
}

fn main() {
    let args = Args::parse();
    let preset = Preset::from_id(&args.preset).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let rules = preset.rules();
    let players = args.players.clamp(rules.players.min, rules.players.max);
    let playouts = Playouts::new(args.playouts);
    let (mut rounds, mut won) = (0u64, 0u64);
    let mut decide_ns: Vec<u64> = Vec::new();
    let mut events: Vec<Event> = Vec::new();
    let mut game_index = 0u64;
    while rounds < args.rounds {
        let seat_a = (game_index % players as u64) as usize;
        let mut rng = ChaCha8Rng::seed_from_u64(args.seed + game_index);
        game_index += 1;
        let mut game = Game::new(rules.clone(), players).expect("preset rules are valid");
        events.clear();
        game.execute(&Command::Start, &mut rng, &mut events)
            .expect("a new game starts");
        while game.status() == Status::Playing && rounds < args.rounds {
            let seat = game
                .round()
                .and_then(|r| r.current)
                .expect("a seat on turn");
            let sight = game.sight(seat).expect("a running round");
            let mv = if seat == seat_a {
                let started = Instant::now();
                let mv = args.level.decide(&sight, playouts, &mut rng);
                decide_ns.push(started.elapsed().as_nanos() as u64);
                mv
            } else {
                args.vs.decide(&sight, Playouts::FULL, &mut rng)
            }
            .expect("a seat on turn has a move");
            events.clear();
            game.execute(&Command::Move { seat, mv }, &mut rng, &mut events)
                .expect("a bot plays a legal move");
            for event in &events {
                if let Event::RoundEnded(ended) = event {
                    rounds += 1;
                    won += u64::from(ended.out_order.first() == Some(&seat_a));
                }
            }
        }
    }
    let share = won as f64 / rounds as f64;
    let (low, high) = wilson(won, rounds);
    decide_ns.sort_unstable();
    let at = |q: f64| {
        decide_ns
            .get((decide_ns.len() as f64 * q) as usize)
            .or(decide_ns.last())
            .copied()
            .unwrap_or(0) as f64
            / 1e6
    };
    println!(
        "arena preset={} players={players} level={} vs={} rounds={rounds} playouts={} win_share={share:.4} ci95_low={low:.4} ci95_high={high:.4} fair_share={:.4} decide_p50_ms={:.4} decide_p99_ms={:.4}",
        preset.id(),
        args.level,
        args.vs,
        playouts.get(),
        1.0 / players as f64,
        at(0.5),
        at(0.99),
    );
}

/// The Wilson score interval at 95% for `k` successes in `n` trials.
fn wilson(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (z, n) = (1.959_964, n as f64);
    let p = k as f64 / n;
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z / (1.0 + z * z / n) * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}
