//! What hashing an event costs (the canonical JSON of `{seq, type, v, at,
//! data}` and its SHA-256), per event, for a move's typical events: prints
//! the median of 15 runs of 20,000 events each.
//!
//!     cargo run --release -p ledger --example hash_cost

use std::time::Instant;

use ledger::chain::{event_hash, GENESIS_PREV_HASH};
use serde_json::json;

fn main() {
    let events = [
        (
            "card_played",
            json!({"seat": 2, "card": "8H", "suit": "S", "announce": false,
                               "salt": "4f0c2a1e9b7d3c5a8e6f1d2b0a9c8e7f"}),
        ),
        (
            "turn_started",
            json!({"seat": 3, "salt": "9b7d3c5a8e6f1d2b0a9c8e7f4f0c2a1e"}),
        ),
        (
            "cards_drawn",
            json!({"seat": 1, "count": 2, "cards": ["QC", "7D"],
                               "salt": "0a9c8e7f4f0c2a1e9b7d3c5a8e6f1d2b"}),
        ),
    ];
    let at = "2025-01-31T18:04:05.123456Z";
    let mut runs = Vec::new();
    for _ in 0..15 {
        let started = Instant::now();
        let mut prev = GENESIS_PREV_HASH.to_owned();
        for seq in 1..=20_000_i64 {
            let (kind, data) = &events[seq as usize % events.len()];
            prev = event_hash(&prev, seq, kind, 3, at, data);
        }
        std::hint::black_box(&prev);
        runs.push(started.elapsed().as_nanos() as f64 / 20_000.0);
    }
    runs.sort_by(f64::total_cmp);
    println!(
        "hash_cost: median {:.0} ns per event (15 runs of 20,000)",
        runs[7]
    );
}
