//! Plays seeded random games to the end and prints the engine's speed.
//!
//! `cargo run --release -p domain --example simulate -- --games N [--preset P] [--players K] [--pure] [--fair]`
//!
//! One line per preset:
//! `preset=<id> players=<k> games=<n> moves=<m> moves_per_sec=<x> games_per_sec=<y>`.
//! A move is: compute the seat's legal moves, choose one at random, decide
//! it and apply its events. By default `execute` decides and applies in
//! place; `--pure` calls `decide` (on a copy of the state) and then `evolve`
//! for each event, the path a replay tool would take. Shuffles come from
//! the game's seeded generator, as in a bot's playouts; `--fair` takes them
//! from the contract's HMAC streams (a server seed drawn per game), as the
//! server's tables do.

use std::time::Instant;

use clap::Parser;

// The engine allocates a little on most moves (drawn cards, events) and more
// per round (the deal, the scores); mimalloc does that about 8% faster than
// glibc's allocator here. The server still uses the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use domain::{Chance, Command, Event, Fair, Game, Preset, ServerSeed, Status};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Parser)]
struct Args {
    /// Games per preset.
    #[arg(long, default_value_t = 1000)]
    games: u64,
    /// One preset id (classique, moderne, base, amerix, 757); all by default.
    #[arg(long)]
    preset: Option<String>,
    /// Players per table (clamped to what the preset allows).
    #[arg(long, default_value_t = 4)]
    players: usize,
    /// Use decide + evolve instead of execute.
    #[arg(long)]
    pure: bool,
    /// Shuffle by the fair-deals contract's HMAC streams.
    #[arg(long)]
    fair: bool,
    /// First seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

fn main() {
    let args = Args::parse();
    let presets: Vec<Preset> = match &args.preset {
        Some(id) => vec![Preset::from_id(id).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        })],
        None => Preset::ALL.to_vec(),
    };
    for preset in presets {
        let rules = preset.rules();
        let players = args.players.clamp(rules.players.min, rules.players.max);
        let mut moves: u64 = 0;
        let mut legal = Vec::new();
        let started = Instant::now();
        for i in 0..args.games {
            let mut rng = ChaCha8Rng::seed_from_u64(args.seed + i);
            let mut g = Game::new(rules.clone(), players).expect("preset rules are valid");
            let seed = ServerSeed::draw(&mut rng);
            let mut fair = Fair {
                seed: &seed,
                table: "00000000-0000-4000-8000-000000000000",
            };
            let mut events: Vec<Event> = Vec::new();
            let mut command = Command::Start;
            loop {
                events.clear();
                if args.fair {
                    step(&mut g, &command, &mut fair, args.pure, &mut events);
                } else {
                    step(&mut g, &command, &mut rng, args.pure, &mut events);
                }
                if g.status() != Status::Playing {
                    break;
                }
                let seat = g
                    .round()
                    .and_then(|r| r.current)
                    .expect("a running game has a seat on turn");
                g.legal_moves_into(seat, &mut legal);
                let mv = legal[rng.gen_range(0..legal.len())].clone();
                command = Command::Move { seat, mv };
                moves += 1;
            }
        }
        let secs = started.elapsed().as_secs_f64();
        println!(
            "preset={} players={} games={} moves={} moves_per_sec={:.0} games_per_sec={:.1}",
            preset.id(),
            players,
            args.games,
            moves,
            moves as f64 / secs,
            args.games as f64 / secs
        );
    }
}

/// Decides and applies `command`: in place, or (`pure`) on a copy and then
/// event by event.
fn step<C: Chance>(
    g: &mut Game,
    command: &Command,
    chance: &mut C,
    pure: bool,
    events: &mut Vec<Event>,
) {
    if pure {
        *events = g.decide(command, chance).expect("legal moves are accepted");
        for e in events.iter() {
            g.evolve(e);
        }
    } else {
        g.execute(command, chance, events)
            .expect("legal moves are accepted");
    }
}
