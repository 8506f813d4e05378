//! A finished log's proof of fair deals (docs/API.md "Fair deals"): the
//! table folded event by event, and every deal, first dealer and reshuffle
//! it records compared, before it is applied, with the one the revealed
//! server seed derives.

use crate::event::Event;
use crate::fair::{Fair, ServerSeed};

use super::{Table, TableEvent};

/// A shuffle a log records that is not the one its seed derives, or a log
/// that does not fold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unfair {
    #[error("event {seq}: round {round} is dealt by another seat than the seed draws")]
    FirstDealer { seq: u64, round: u32 },
    #[error("event {seq}: round {round}'s deal is not the one the seed derives")]
    Deal { seq: u64, round: u32 },
    #[error("event {seq}: round {round}'s reshuffle {shuffle} is not the one the seed derives")]
    Reshuffle { seq: u64, round: u32, shuffle: u32 },
    #[error("event {seq}: the log does not fold here")]
    Unfolded { seq: u64 },
}

/// What a log's check covered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DealsChecked {
    pub deals: usize,
    pub reshuffles: usize,
}

/// Checks every shuffle of a table's log (events from seq 1) against
/// `seed`, for the table whose id is `table` (lowercase hyphenated UUID).
pub fn verify_deals<'a>(
    events: impl IntoIterator<Item = &'a TableEvent>,
    seed: &ServerSeed,
    table: &str,
) -> Result<DealsChecked, Unfair> {
    let mut fair = Fair { seed, table };
    let mut checked = DealsChecked::default();
    let mut folded: Option<Table> = None;
    for (i, event) in events.into_iter().enumerate() {
        let seq = i as u64 + 1;
        let before = folded
            .as_ref()
            .and_then(|t| t.game.as_ref().map(|g| (t, g)));
        if let (Some((t, game)), TableEvent::Game(e)) = (before, event) {
            match e {
                Event::RoundStarted(rs) => {
                    let round = rs.round;
                    let drawn = t.lobby.rematch_of.is_none() && game.history.is_empty();
                    if drawn && rs.dealer != game.first_dealer(&mut fair) {
                        return Err(Unfair::FirstDealer { seq, round });
                    }
                    if game.dealt(rs.dealer, None, &mut fair) != **rs {
                        return Err(Unfair::Deal { seq, round });
                    }
                    checked.deals += 1;
                }
                Event::StockReshuffled { stock } => {
                    let r = game.round.as_ref().ok_or(Unfair::Unfolded { seq })?;
                    if game.reshuffled(&mut fair) != *stock {
                        let (round, shuffle) = (r.number, r.reshuffles + 1);
                        return Err(Unfair::Reshuffle {
                            seq,
                            round,
                            shuffle,
                        });
                    }
                    checked.reshuffles += 1;
                }
                _ => {}
            }
        }
        match &mut folded {
            None => folded = Some(Table::from_events([event]).ok_or(Unfair::Unfolded { seq })?),
            Some(t) => super::apply_guarded(t, seq, event).map_err(|_| Unfair::Unfolded { seq })?,
        }
    }
    Ok(checked)
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::game::Status;
    use crate::rules::Preset;
    use crate::table::{Joining, TableCommand};

    const TABLE: &str = "00000000-0000-4000-8000-000000000000";

    fn seed() -> ServerSeed {
        ServerSeed::from_bytes(*b"a fair seed, thirty-two bytes ok")
    }

    /// A game of `preset` dealt by the contract's shuffles, played by
    /// seeded random legal moves until it ends or `events` are logged.
    fn played(preset: Preset, seats: usize, events: usize) -> Vec<TableEvent> {
        let seed = seed();
        let mut fair = Fair {
            seed: &seed,
            table: TABLE,
        };
        let mut moves = ChaCha8Rng::seed_from_u64(7);
        let options = serde_json::json!({"rounds": 1000, "target": 100000});
        let creator = "p0".into();
        let options = match preset {
            Preset::Classique => options.as_object().unwrap().clone(),
            _ => serde_json::Map::new(),
        };
        let mut log = Table::create(preset.id(), &options, seats, None, &creator).unwrap();
        let mut table = Table::from_events(&log).unwrap();
        for p in 1..seats {
            let join = TableCommand::Join {
                account_id: format!("p{p}").into(),
                joining: Joining::Open,
                guest: false,
            };
            log.extend(table.execute(&join, &mut fair).unwrap());
        }
        let start = TableCommand::Start {
            account_id: creator,
        };
        log.extend(table.execute(&start, &mut fair).unwrap());
        while table.status() == Status::Playing && log.len() < events {
            let game = table.game.as_ref().unwrap();
            let seat = game.round().and_then(|r| r.current).unwrap();
            let legal = game.legal_moves(seat);
            let mv = legal[moves.gen_range(0..legal.len())].clone();
            let account_id = table.players[seat].as_ref().unwrap().account_id.clone();
            let command = TableCommand::Move { account_id, mv };
            log.extend(table.execute(&command, &mut fair).unwrap());
        }
        log
    }

    fn first(log: &[TableEvent], what: impl Fn(&Event) -> bool) -> usize {
        log.iter()
            .position(|e| matches!(e, TableEvent::Game(e) if what(e)))
            .expect("the log holds one")
    }

    #[test]
    fn every_presets_deals_and_reshuffles_are_the_seeds() {
        let mut reshuffles = 0;
        for preset in Preset::ALL {
            let players = preset.rules().players;
            let seats = 4.clamp(players.min, players.max);
            let log = played(preset, seats, 3000);
            let checked = verify_deals(&log, &seed(), TABLE).unwrap();
            assert!(checked.deals >= 1, "{preset:?}");
            reshuffles += checked.reshuffles;
        }
        assert!(reshuffles > 0, "some game reshuffled its stock");
    }

    #[test]
    fn another_seed_or_another_table_fails_at_the_first_deal() {
        let log = played(Preset::Classique, 4, 200);
        let other = ServerSeed::from_bytes([9; 32]);
        let deal = first(&log, |e| matches!(e, Event::RoundStarted(_))) as u64 + 1;
        for (seed, table) in [
            (&other, TABLE),
            (&seed(), "00000000-0000-4000-8000-000000000001"),
        ] {
            match verify_deals(&log, seed, table) {
                Err(Unfair::FirstDealer { seq, round: 1 } | Unfair::Deal { seq, round: 1 }) => {
                    assert_eq!(seq, deal)
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_reshuffle_altered_fails_at_that_reshuffle() {
        let mut log = played(Preset::Classique, 4, 3000);
        let at = first(&log, |e| matches!(e, Event::StockReshuffled { .. }));
        let TableEvent::Game(Event::StockReshuffled { stock }) = &mut log[at] else {
            unreachable!()
        };
        let last = stock.len() - 1;
        let different = (0..last).find(|&i| stock[i] != stock[last]).unwrap();
        stock.swap(different, last);
        match verify_deals(&log, &seed(), TABLE) {
            Err(Unfair::Reshuffle {
                seq, shuffle: 1, ..
            }) => assert_eq!(seq, at as u64 + 1),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_deal_altered_fails_at_that_deal() {
        let mut log = played(Preset::Classique, 4, 3000);
        let at = first(
            &log,
            |e| matches!(e, Event::RoundStarted(rs) if rs.round == 2),
        );
        let TableEvent::Game(Event::RoundStarted(rs)) = &mut log[at] else {
            unreachable!()
        };
        let (a, b) = (rs.hands[&0][0], rs.hands[&1][0]);
        rs.hands.get_mut(&0).unwrap()[0] = b;
        rs.hands.get_mut(&1).unwrap()[0] = a;
        assert_ne!(a, b);
        assert_eq!(
            verify_deals(&log, &seed(), TABLE),
            Err(Unfair::Deal {
                seq: at as u64 + 1,
                round: 2
            })
        );
    }
}
