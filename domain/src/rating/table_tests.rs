//! D43: a rated game is one that people played. The table (live) and the
//! log alone (`huit ratings rebuild`) judge it the same, on tables played
//! with the table's own test helpers (`table::presence_tests`).

use super::*;
use crate::table::presence_tests::{
    clock, own_move, run, server_plays, started, time_out, until_turn_of,
};
use crate::table::TableCommand;

/// `who` resign in turn; the events that end the game.
fn resign_all(table: &mut Table, log: &mut Vec<TableEvent>, who: &[&str]) -> GameEnded {
    for id in who {
        let resign = TableCommand::Resign {
            account_id: (*id).into(),
        };
        run(table, log, resign);
        server_plays(table, log);
    }
    match log.last() {
        Some(TableEvent::Game(Event::GameEnded(ended))) => (**ended).clone(),
        last => panic!("the game goes on: {last:?}"),
    }
}

/// The table's judgement of its game, checked against the log's.
fn rated(table: &Table, log: &[TableEvent], ended: &GameEnded) -> Option<RatedGame> {
    let live = table.rated_game(ended);
    assert_eq!(live, RatedGame::from_log(log), "the log judges it the same");
    live
}

#[test]
fn d43_people_who_resign_before_any_move_of_their_own_make_the_game_unrated() {
    let (mut table, mut log) = started(None);
    let ended = resign_all(&mut table, &mut log, &["b", "c"]);
    assert_eq!(ended.winners, vec![0]);
    assert_eq!(rated(&table, &log, &ended), None);
}

#[test]
fn d43_a_seat_that_only_timed_out_and_was_played_by_the_server_makes_the_game_unrated() {
    let (mut table, mut log) = started(clock(2));
    // Every seat has had a turn; "b"'s were timeouts, then the server's.
    for _ in 0..6 {
        match table.must_act() {
            Some(1) if table.automatic().is_none() => {
                time_out(&mut table, &mut log);
            }
            Some(_) if table.automatic().is_some() => server_plays(&mut table, &mut log),
            _ => {
                own_move(&mut table, &mut log);
            }
        }
    }
    assert!(table.presence[1].turned && !table.presence[1].moved);
    let ended = resign_all(&mut table, &mut log, &["a", "c"]);
    assert_eq!(rated(&table, &log, &ended), None);
}

#[test]
fn d43_a_game_every_person_moved_in_is_rated_however_it_ended() {
    let (mut table, mut log) = started(clock(2));
    for _ in 0..3 {
        own_move(&mut table, &mut log);
    }
    assert!(table.presence.iter().all(|p| p.moved));
    // "b" then times out and is played by the server: still rated, he
    // played (D40: a resigned or away seat counts as its ranking says).
    until_turn_of(&mut table, &mut log, 1);
    time_out(&mut table, &mut log);
    server_plays(&mut table, &mut log);
    let ended = resign_all(&mut table, &mut log, &["c", "b"]);
    let game = rated(&table, &log, &ended).expect("rated");
    assert_eq!(game.finishes.len(), 3);
}

/// Corrections (docs/API.md "Corrections and sanctions"): the log's last
/// one says how the game is rated.
mod corrected {
    use super::*;
    use crate::table::correction::tests::{correct, corrected, finished};
    use crate::table::Correction;

    #[test]
    fn a_voided_game_counts_for_no_one_until_a_correction_gives_it_back() {
        let (mut table, mut log) = finished();
        let rated = RatedGame::from_log(&log).expect("a game its people played is rated");
        run(&mut table, &mut log, correct(Correction::Void {}));
        assert_eq!(RatedGame::from_log(&log), None, "voided: not rated");
        run(&mut table, &mut log, correct(Correction::None {}));
        assert_eq!(RatedGame::from_log(&log), Some(rated));
    }

    #[test]
    fn a_game_is_rated_as_its_last_correction_ranks_it() {
        let (mut table, mut log) = finished();
        let seat = table.game.as_ref().unwrap().result().unwrap().winners[0];
        let events = run(
            &mut table,
            &mut log,
            correct(Correction::Disqualify { seat }),
        );
        let c = corrected(&events).clone();
        let rated = RatedGame::from_log(&log).unwrap();
        let place = |seat: Seat| c.ranking.iter().find(|p| p.seat == seat).unwrap().place;
        for (seat, f) in rated.finishes.iter().enumerate() {
            let won = c.winners.contains(&seat);
            assert_eq!(
                (f.place, f.total, f.won),
                (place(seat), c.totals[seat], won)
            );
        }
        assert_eq!(
            rated.finishes[seat].place, 3,
            "the disqualified seat is last"
        );
    }
}
