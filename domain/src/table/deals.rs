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
    #[error("the log commits to no server seed (a table older than fair deals)")]
    NoCommitment,
    #[error("the log has not revealed its server seed: its game is not over")]
    NotRevealed,
    #[error("event {seq}: the revealed seed is not the one table_created committed to")]
    Commitment { seq: u64 },
}

/// What a log's check covered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DealsChecked {
    pub deals: usize,
    pub reshuffles: usize,
}

/// The whole proof of a finished log, from the log alone and its table's id
/// (lowercase hyphenated UUID): `table_created` committed to a seed, the
/// seed `seed_revealed` logs once the game is over is that one, and every
/// shuffle is the one it derives ([`verify_deals`]).
pub fn verify_revealed(events: &[TableEvent], table: &str) -> Result<DealsChecked, Unfair> {
    let Some(TableEvent::TableCreated(created)) = events.first() else {
        return Err(Unfair::Unfolded { seq: 1 });
    };
    let committed = created.seed_hash.ok_or(Unfair::NoCommitment)?;
    let (at, seed) = events
        .iter()
        .enumerate()
        .find_map(|(i, e)| match e {
            TableEvent::SeedRevealed { server_seed } => Some((i, server_seed)),
            _ => None,
        })
        .ok_or(Unfair::NotRevealed)?;
    if !committed.commits_to(seed) {
        return Err(Unfair::Commitment { seq: at as u64 + 1 });
    }
    verify_deals(events, seed, table)
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
    use crate::fair::ClientSeed;
    use crate::game::Status;
    use crate::rules::Preset;
    use crate::table::{Joining, Lobby, Newcomer, TableCommand};

    const TABLE: &str = "00000000-0000-4000-8000-000000000000";

    fn seed() -> ServerSeed {
        ServerSeed::from_bytes(*b"a fair seed, thirty-two bytes ok")
    }

    fn client_seed(p: usize) -> Option<ClientSeed> {
        Some(ClientSeed::new(format!("seat-{p}'s-own")).unwrap())
    }

    /// A table of `preset` committed to [`seed`], whose seats brought
    /// their seeds, started; its log and itself.
    fn started(
        preset: Preset,
        seats: usize,
        options: serde_json::Value,
    ) -> (Vec<TableEvent>, Table) {
        let seed = seed();
        let mut fair = Fair {
            seed: &seed,
            table: TABLE,
        };
        let options = options.as_object().unwrap();
        let newcomer = |p: usize| Newcomer {
            account_id: format!("p{p}").into(),
            guest: false,
            client_seed: client_seed(p),
        };
        let lobby = Lobby::default();
        let commitment = Some(seed.hash());
        let creator = newcomer(0);
        let mut log = Table::open(
            preset.id(),
            options,
            seats,
            None,
            &lobby,
            &creator,
            commitment,
        )
        .unwrap();
        let mut table = Table::from_events(&log).unwrap();
        for p in 1..seats {
            let joiner = newcomer(p);
            let join = TableCommand::Join {
                account_id: joiner.account_id,
                joining: Joining::Open,
                guest: false,
                client_seed: joiner.client_seed,
            };
            log.extend(table.execute(&join, &mut fair).unwrap());
        }
        let start = TableCommand::Start {
            account_id: creator.account_id,
        };
        log.extend(table.execute(&start, &mut fair).unwrap());
        (log, table)
    }

    /// A game of `preset` dealt by the contract's shuffles, played by
    /// seeded random legal moves until it ends or `events` are logged.
    fn played(preset: Preset, seats: usize, events: usize) -> Vec<TableEvent> {
        let options = match preset {
            Preset::Classique => serde_json::json!({"rounds": 1000, "target": 100000}),
            _ => serde_json::json!({}),
        };
        play_on(preset, seats, options, events)
    }

    fn play_on(
        preset: Preset,
        seats: usize,
        options: serde_json::Value,
        events: usize,
    ) -> Vec<TableEvent> {
        let (mut log, mut table) = started(preset, seats, options);
        let seed = seed();
        let mut fair = Fair {
            seed: &seed,
            table: TABLE,
        };
        let mut moves = ChaCha8Rng::seed_from_u64(7);
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

    fn revealed(log: &[TableEvent]) -> Vec<usize> {
        let at = log.iter().enumerate();
        at.filter(|(_, e)| matches!(e, TableEvent::SeedRevealed { .. }))
            .map(|(i, _)| i)
            .collect()
    }

    #[test]
    fn a_finished_game_reveals_its_seed_once_after_its_end_and_its_log_alone_proves_its_deals() {
        let log = play_on(
            Preset::Classique,
            3,
            serde_json::json!({"rounds": 2}),
            100_000,
        );
        let n = log.len();
        assert_eq!(log[n - 2].kind(), "game_ended");
        assert_eq!(revealed(&log), [n - 1], "once, right after the end");
        assert_eq!(
            log[n - 1],
            TableEvent::SeedRevealed {
                server_seed: seed()
            }
        );
        let checked = verify_revealed(&log, TABLE).unwrap();
        assert_eq!(checked.deals, 2);
        let table = Table::from_events(&log).unwrap();
        assert_eq!(table.revealed, Some(seed()));
    }

    #[test]
    fn an_aborted_game_reveals_its_seed() {
        let (mut log, mut table) = started(Preset::Classique, 2, serde_json::json!({}));
        let seed = seed();
        let mut fair = Fair {
            seed: &seed,
            table: TABLE,
        };
        let abort = TableCommand::Abort {
            account_id: "p1".into(),
        };
        log.extend(table.execute(&abort, &mut fair).unwrap());
        let n = log.len();
        assert_eq!(log[n - 2].kind(), "game_aborted");
        assert_eq!(revealed(&log), [n - 1]);
        assert!(verify_revealed(&log, TABLE).is_ok());
    }

    #[test]
    fn nothing_is_revealed_while_the_game_runs_nor_by_streams_that_prove_nothing() {
        let running = played(Preset::Classique, 4, 300);
        let table = Table::from_events(&running).unwrap();
        assert_eq!(table.status(), Status::Playing);
        assert!(revealed(&running).is_empty());
        assert_eq!(verify_revealed(&running, TABLE), Err(Unfair::NotRevealed));
        // Ended by a chance that is not the committed seed's: nothing to
        // reveal (a generator has no seed; another seed is not the one).
        let other = ServerSeed::from_bytes([3; 32]);
        let mut fair = Fair {
            seed: &other,
            table: TABLE,
        };
        let abort = TableCommand::Abort {
            account_id: "p0".into(),
        };
        let (_, mut t) = started(Preset::Classique, 2, serde_json::json!({}));
        assert_eq!(t.execute(&abort, &mut fair).unwrap().len(), 1);
        let (_, mut t) = started(Preset::Classique, 2, serde_json::json!({}));
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert_eq!(t.execute(&abort, &mut rng).unwrap().len(), 1);
    }

    #[test]
    fn a_revealed_seed_that_is_not_the_committed_one_fails() {
        let mut log = play_on(
            Preset::Classique,
            2,
            serde_json::json!({"rounds": 1}),
            100_000,
        );
        let n = log.len();
        log[n - 1] = TableEvent::SeedRevealed {
            server_seed: ServerSeed::from_bytes([5; 32]),
        };
        assert_eq!(
            verify_revealed(&log, TABLE),
            Err(Unfair::Commitment { seq: n as u64 })
        );
        let legacy = Table::create("classique", &Default::default(), 2, None, &"p0".into());
        assert_eq!(
            verify_revealed(&legacy.unwrap(), TABLE),
            Err(Unfair::NoCommitment)
        );
    }

    #[test]
    fn the_seats_seeds_as_the_game_starts_key_its_shuffles() {
        let (log, table) = started(Preset::Classique, 3, serde_json::json!({}));
        let seeds: Vec<_> = (0..3).map(|p| client_seed(p).unwrap()).collect();
        assert_eq!(table.game.as_ref().unwrap().clients, seeds);
        // One seat's seed changed in the log: the deal the seed derives is
        // not the one logged.
        let mut other = log.clone();
        let joined = other
            .iter_mut()
            .find_map(|e| match e {
                TableEvent::PlayerJoined(s) if s.seat == 1 => Some(s),
                _ => None,
            })
            .unwrap();
        joined.client_seed = Some(ClientSeed::new("another").unwrap());
        let started = other
            .iter_mut()
            .find_map(|e| match e {
                TableEvent::GameStarted { players } => Some(players),
                _ => None,
            })
            .unwrap();
        started[1].client_seed = Some(ClientSeed::new("another").unwrap());
        assert!(verify_deals(&log, &seed(), TABLE).is_ok());
        assert!(matches!(
            verify_deals(&other, &seed(), TABLE),
            Err(Unfair::FirstDealer { .. } | Unfair::Deal { .. })
        ));
    }
}
