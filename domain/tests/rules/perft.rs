//! Counted-outcome fixtures ("perft", as for chess move generators): from a
//! fixed seeded deal, the number of distinct legal move sequences of exactly
//! `depth` moves. A rule change that alters the game shows up as a changed
//! number in `fixtures/perft.txt`.
//!
//! How the count is made:
//! - the root is `Game::new(preset, seats)` started with `Command::Start` and
//!   `support::rng(seed)` (ChaCha8: stable across platforms and versions of
//!   `rand_chacha` 0.3), which draws the dealer and shuffles;
//! - at every node, the moves are `legal_moves(s)` of every seat `s` in
//!   seat order (so challenges by any seat count), each paired with its seat;
//! - a move that shuffles (recycling the stock, dealing the next round)
//!   consumes randomness: every move made from a node at depth `d` (root =
//!   0) gets a fresh `rng(d)`, so a count depends only on the rules;
//! - sequences that end the game before `depth` moves count 0.
//!
//! Regenerate after an intended rule change (and say why in the commit):
//! `HUIT_BLESS=1 cargo test -p domain --test perft`

use crate::support::*;
use domain::{Command, Game, Move};

/// `preset seats seed depth` of every fixture line.
const CONFIGS: &[(&str, usize, u64, usize)] = &[
    ("classique", 2, 1, 8),
    ("classique", 3, 2, 6),
    ("classique", 4, 3, 7),
    ("moderne", 2, 1, 7),
    ("moderne", 3, 2, 6),
    ("moderne", 4, 3, 6),
    ("base", 2, 1, 8),
    ("base", 3, 2, 8),
    ("base", 5, 3, 8),
    ("amerix", 2, 1, 7),
    ("amerix", 3, 2, 6),
    ("amerix", 4, 3, 7),
    ("757", 2, 1, 5),
    ("757", 3, 2, 5),
    ("757", 7, 3, 6),
];

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/perft.txt");

fn perft(g: &Game, depth: usize, ply: u64) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut count = 0;
    for seat in 0..g.seats() {
        for mv in g.legal_moves(seat) {
            let mut child = g.clone();
            let mut out = Vec::new();
            child
                .execute(
                    &Command::Move {
                        seat,
                        mv: mv.clone(),
                    },
                    &mut rng(ply),
                    &mut out,
                )
                .unwrap_or_else(|e| panic!("listed move {mv:?} of seat {seat} refused: {e}"));
            count += perft(&child, depth - 1, ply + 1);
        }
    }
    count
}

fn root(id: &str, seats: usize, seed: u64) -> Game {
    let mut g = Game::new(preset(id), seats).unwrap();
    let mut out = Vec::new();
    g.execute(&Command::Start, &mut rng(seed), &mut out)
        .unwrap();
    g
}

fn render() -> String {
    let mut s = String::from(
        "# preset seats seed depth count — distinct legal move sequences; see tests/perft.rs\n\
         # regenerate: HUIT_BLESS=1 cargo test -p domain --test perft\n",
    );
    for &(id, seats, seed, depth) in CONFIGS {
        let n = perft(&root(id, seats, seed), depth, 0);
        s += &format!("{id} {seats} {seed} {depth} {n}\n");
    }
    s
}

#[test]
fn perft_counts_match_the_fixture() {
    let now = render();
    if std::env::var_os("HUIT_BLESS").is_some() {
        std::fs::write(FIXTURE, &now).unwrap();
        return;
    }
    let kept = std::fs::read_to_string(FIXTURE)
        .unwrap_or_else(|e| panic!("{FIXTURE}: {e}; create it with HUIT_BLESS=1"));
    for (want, got) in kept.lines().zip(now.lines()) {
        assert_eq!(
            got, want,
            "perft count changed (HUIT_BLESS=1 to accept an intended change)"
        );
    }
    assert_eq!(kept.lines().count(), now.lines().count(), "fixture lines");
}

/// The counter itself, on a position small enough to count by hand: seat 0
/// holds 5H 6C on 4H (three seats, no challenge possible): 1 move at depth
/// 1; after it seat 1 may challenge the unannounced last card, seat 2 too,
/// or seat 1 draws (nothing legal).
#[test]
fn perft_counts_challenges_by_any_seat() {
    let g = game(
        preset("classique"),
        Deal {
            dealer: 2,
            hands: &["5H 6C", "9S 9D 9C", "KS KD KC"],
            starter: "4H",
            stock: "3S 3D 7C 7D",
        },
    );
    assert_eq!(legal(&g, 0), ["5H!", "5H"]);
    assert_eq!(perft(&g, 1, 0), 2);
    let mut after = g.clone();
    ok(&mut after, 0, play("5H"));
    assert_eq!(
        (0..3)
            .flat_map(|s| after.legal_moves(s))
            .collect::<Vec<_>>(),
        vec![
            Move::Challenge { seat: 0 },
            Move::Draw {},
            Move::Challenge { seat: 0 }
        ]
    );
    let mut quiet = g.clone();
    ok(&mut quiet, 0, announced(play("5H")));
    assert_eq!(perft(&g, 2, 0), 3 + perft(&quiet, 1, 1));
}
