//! Property tests of section 7 (docs/RULES.md D37–D42) through whole tables:
//! seeded random games of every preset where, besides the players' own
//! moves, seats time out, go away and come back, resign, bots hold seats
//! and the server moves for them, and games get aborted. At every step the
//! card count holds (§8); every timeout and bot move is the one the server
//! had to make (the audit's check); and the log refolds to the identical
//! table.
//!
//! `HUIT_TABLES` sets the number of tables per preset (default 40).

use crate::support::rng;
use domain::bots::{Level, Playouts};
use domain::{Clock, Preset, Status, Table, TableCommand, TableEvent};
use rand::Rng;

fn tables_per_preset() -> u64 {
    std::env::var("HUIT_TABLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40)
}

const NAMES: [&str; 4] = ["p0", "p1", "p2", "p3"];

/// Plays one table to its end (or its abort); the number of commands.
fn play_table(preset: Preset, seed: u64) -> usize {
    let mut rng = rng(seed);
    let seats = 4.min(preset.rules().players.max);
    let clock = Some(Clock {
        turn_seconds: 30,
        away_after: rng.gen_range(1..=3),
    });
    let mut log =
        Table::create(preset.id(), &Default::default(), seats, clock, &"p0".into()).unwrap();
    let mut table = Table::from_events(&log).unwrap();
    // Seats 1.. are people or bots, at random.
    for name in &NAMES[1..seats] {
        let command = if rng.gen_bool(0.4) {
            TableCommand::SeatBot {
                account_id: "p0".into(),
                level: [Level::Random, Level::Basic][rng.gen_range(0..2)],
                client_seed: None,
            }
        } else {
            TableCommand::Join {
                account_id: (*name).into(),
                joining: domain::Joining::Open,
                guest: false,
                client_seed: None,
            }
        };
        log.extend(table.execute(&command, &mut rng).unwrap());
    }
    log.extend(
        table
            .execute(
                &TableCommand::Start {
                    account_id: "p0".into(),
                },
                &mut rng,
            )
            .unwrap(),
    );
    let person = |table: &Table, seat: usize| -> Option<domain::PlayerId> {
        let seated = table.players.get(seat)?.as_ref()?;
        seated.bot.is_none().then(|| seated.account_id.clone())
    };
    let mut steps = 0;
    while table.status() == Status::Playing && steps < 20_000 {
        steps += 1;
        let seat = table
            .must_act()
            .expect("a playing table has a seat on turn");
        let command = if table.automatic().is_some() {
            TableCommand::PlayFor {
                seed: rng.gen(),
                playouts: Playouts::new(rng.gen_range(0..=1000)),
            }
        } else if rng.gen_bool(0.01) {
            // Someone resigns, aborts or comes back, when they may.
            let who = rng.gen_range(0..seats);
            match (person(&table, who), rng.gen_range(0..3)) {
                (Some(account_id), 0) => TableCommand::Resign { account_id },
                (Some(account_id), 1) => TableCommand::Abort { account_id },
                (Some(account_id), _) => TableCommand::Back { account_id },
                (None, _) => continue,
            }
        } else if rng.gen_bool(0.15) {
            TableCommand::TimeOut {
                deadline: "2025-01-31T18:04:35.000000Z".into(),
            }
        } else {
            let moves = table.game.as_ref().unwrap().legal_moves(seat);
            let account_id = person(&table, seat).expect("a person on turn");
            TableCommand::Move {
                account_id,
                mv: moves[rng.gen_range(0..moves.len())].clone(),
            }
        };
        let before = table.clone();
        let events = match table.execute(&command, &mut rng) {
            Ok(events) => events,
            // A refusal (too late to abort, not away, …) changes nothing.
            Err(_) => {
                assert_eq!(table, before, "a refused {command:?} changed the table");
                continue;
            }
        };
        if let Some(marker @ (TableEvent::TurnTimedOut { .. } | TableEvent::BotMoved { .. })) =
            events.first()
        {
            assert_eq!(
                before.check_automatic(marker, &events[1..]),
                Ok(()),
                "{command:?}"
            );
        }
        log.extend(events);
        if let Some(r) = table.game.as_ref().and_then(|g| g.round()) {
            assert_eq!(r.card_count(), r.size, "card count changed");
        }
        if steps % 64 == 0 {
            assert_eq!(Table::from_events(&log).unwrap(), table, "the log refolds");
        }
    }
    assert_ne!(table.status(), Status::Playing, "{preset:?} {seed}: no end");
    assert_eq!(Table::from_events(&log).unwrap(), table, "the log refolds");
    steps
}

#[test]
fn d37_d42_random_tables_with_timeouts_absences_resignations_and_bots_keep_the_invariants() {
    for preset in Preset::ALL {
        let mut steps = 0;
        for seed in 0..tables_per_preset() {
            steps += play_table(preset, 1000 + seed);
        }
        assert!(steps > 100, "{preset:?}: {steps} steps");
    }
}
