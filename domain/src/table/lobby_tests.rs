//! Finding a game (docs/API.md "Finding a game and coming back"): private
//! tables, tables that start by themselves, quick play's bots and the
//! rematch, each folded back exactly from its events.

use std::time::Duration;

use rand::SeedableRng;

use super::*;
use crate::bots::Level;

fn rng() -> rand::rngs::StdRng {
    rand::rngs::StdRng::seed_from_u64(29)
}

fn join(id: &str, joining: Joining) -> TableCommand {
    TableCommand::Join {
        account_id: id.into(),
        joining,
        guest: false,
        client_seed: None,
    }
}

fn newcomer(id: &str) -> Newcomer {
    Newcomer {
        account_id: id.into(),
        guest: false,
        client_seed: None,
    }
}

/// A 3-seat `classique` table opened by "a" with `lobby`, and its log.
fn opened(lobby: Lobby) -> (Table, Vec<TableEvent>) {
    let log = Table::open(
        "classique",
        &Default::default(),
        3,
        None,
        &lobby,
        &newcomer("a"),
        None,
    )
    .unwrap();
    (Table::from_events(&log).unwrap(), log)
}

/// Runs `command`, keeps its events in `log`, and checks that the log
/// folds back to the same table.
fn run(table: &mut Table, log: &mut Vec<TableEvent>, command: &TableCommand) -> Vec<TableEvent> {
    let events = table.execute(command, &mut rng()).unwrap();
    log.extend(events.iter().cloned());
    assert_eq!(&Table::from_events(log.iter()).unwrap(), table);
    events
}

fn quick(bots_after: Option<u32>) -> Lobby {
    Lobby {
        starts_when_full: true,
        bots_after,
        ..Lobby::default()
    }
}

#[test]
fn a_private_table_is_joined_through_its_invitation_only() {
    let (mut t, mut log) = opened(Lobby {
        visibility: Visibility::Private,
        ..Lobby::default()
    });
    assert_eq!(
        t.decide(&join("b", Joining::Open), &mut rng()),
        Err(TableError::InvitationNeeded)
    );
    run(&mut t, &mut log, &join("b", Joining::Invited));
    assert_eq!(t.seat_of(&"b".into()), Some(1));
    // The log says the table is private, and nothing of an invitation.
    let created = log[0].to_json();
    assert_eq!(created["data"]["visibility"], "private", "{created}");
    assert!(!created.to_string().contains("invite"), "{created}");
    // A public table's log is as it always was.
    let (_, public) = opened(Lobby::default());
    assert!(public[0].data().get("visibility").is_none());
}

#[test]
fn a_table_that_starts_by_itself_deals_when_its_last_seat_is_taken() {
    let (mut t, mut log) = opened(quick(None));
    run(&mut t, &mut log, &join("b", Joining::Open));
    assert_eq!(t.status(), Status::Waiting);
    // Nobody starts it, nor seats a bot, by hand.
    let start = TableCommand::Start {
        account_id: "a".into(),
    };
    assert_eq!(
        t.decide(&start, &mut rng()),
        Err(TableError::StartsByItself)
    );
    let bot = TableCommand::SeatBot {
        account_id: "a".into(),
        level: Level::Basic,
        client_seed: None,
    };
    assert_eq!(t.decide(&bot, &mut rng()), Err(TableError::StartsByItself));
    let events = run(&mut t, &mut log, &join("c", Joining::Open));
    let kinds: Vec<&str> = events.iter().map(TableEvent::kind).collect();
    assert_eq!(
        &kinds[..3],
        ["player_joined", "game_started", "round_started"]
    );
    assert_eq!(t.status(), Status::Playing);
}

#[test]
fn quick_plays_bots_are_due_bots_after_seconds_after_the_table_opened() {
    let (mut t, mut log) = opened(quick(Some(30)));
    let opening = t.due_after(Turn::default(), &log, Duration::ZERO);
    assert_eq!(opening, Due::After(Duration::from_secs(30)));
    // Later lobby events keep the time the opening set.
    let joined = run(&mut t, &mut log, &join("b", Joining::Open));
    assert_eq!(
        t.due_after(Turn::default(), &joined, Duration::ZERO),
        Due::Keep
    );
    // An ordinary table has nothing due while it waits.
    let (plain, plain_log) = opened(Lobby::default());
    assert_eq!(
        plain.due_after(Turn::default(), &plain_log, Duration::ZERO),
        Due::Clear
    );
    assert_eq!(
        plain.decide(
            &TableCommand::FillWithBots {
                client_seeds: Vec::new()
            },
            &mut rng()
        ),
        Err(TableError::NoAutomaticMove)
    );
    let events = run(
        &mut t,
        &mut log,
        &TableCommand::FillWithBots {
            client_seeds: Vec::new(),
        },
    );
    assert_eq!(
        events[0],
        TableEvent::BotSeated {
            seat: 2,
            level: Level::Basic,
            client_seed: None,
        }
    );
    assert_eq!(events[1].kind(), "game_started");
    assert_eq!(t.status(), Status::Playing);
    assert_eq!(
        t.decide(
            &TableCommand::FillWithBots {
                client_seeds: Vec::new()
            },
            &mut rng()
        ),
        Err(TableError::NotWaiting)
    );
}

#[test]
fn quick_plays_bots_never_play_alone() {
    let (mut t, mut log) = opened(quick(Some(5)));
    let leave = TableCommand::Leave {
        account_id: "a".into(),
    };
    run(&mut t, &mut log, &leave);
    assert_eq!(
        t.decide(
            &TableCommand::FillWithBots {
                client_seeds: Vec::new()
            },
            &mut rng()
        ),
        Err(TableError::NoPersonSeated)
    );
}

/// A finished 3-seat game of "a", "b" and a basic bot (at seat 1): "b"
/// resigns, and "a" alone is left with the bot.
fn finished() -> (Table, Vec<TableEvent>) {
    let (mut t, mut log) = opened(Lobby::default());
    let bot = TableCommand::SeatBot {
        account_id: "a".into(),
        level: Level::Basic,
        client_seed: None,
    };
    run(&mut t, &mut log, &bot);
    run(&mut t, &mut log, &join("b", Joining::Open));
    let start = TableCommand::Start {
        account_id: "a".into(),
    };
    run(&mut t, &mut log, &start);
    for who in ["b", "a"] {
        let resign = TableCommand::Resign {
            account_id: who.into(),
        };
        run(&mut t, &mut log, &resign);
    }
    assert_eq!(t.status(), Status::Finished);
    (t, log)
}

const OLD: &str = "4f3a2b1c-0d9e-4f8a-9b7c-6d5e4f3a2b1c";

#[test]
fn a_rematch_keeps_the_rules_the_seats_and_the_bots_and_moves_the_first_dealer_on() {
    let (old, _) = finished();
    let events = old
        .rematch(OLD, &newcomer("b"), None, &[], &mut rng())
        .unwrap();
    let next = Table::from_events(&events).unwrap();
    assert_eq!(
        (&next.rules, next.seats, next.clock),
        (&old.rules, 3, old.clock)
    );
    assert_eq!(next.creator, "b".into());
    assert_eq!(next.bot_at(1), Some(Level::Basic));
    assert_eq!(next.seat_of(&"b".into()), Some(2), "b keeps the seat b had");
    let of = next.lobby.rematch_of.clone().unwrap();
    assert_eq!(of.table_id, OLD);
    assert_eq!(of.first_dealer, (old.first_dealer.unwrap() + 1) % 3);
    assert!(next.lobby.starts_when_full);
    assert_eq!(next.status(), Status::Waiting, "a is not back yet");
}

#[test]
fn a_rematch_a_person_will_never_come_to_is_closed_and_nobody_else_declines_for_them() {
    let (old, _) = finished();
    let mut log = old
        .rematch(OLD, &newcomer("b"), None, &[], &mut rng())
        .unwrap();
    let mut next = Table::from_events(&log).unwrap();
    let decline = |who: &str| TableCommand::DeclineRematch {
        account_id: who.into(),
    };
    assert_eq!(
        next.decide(&decline("z"), &mut rng()),
        Err(TableError::NotSeated),
        "no seat kept for z"
    );
    let a_seat = old.seat_of(&"a".into()).unwrap();
    let declined = run(&mut next, &mut log, &decline("a"));
    assert_eq!(declined, vec![TableEvent::RematchDeclined { seat: a_seat }]);
    assert_eq!(next.status(), Status::Aborted, "closed: it never starts");
    assert_eq!(
        next.decide(&join("a", Joining::Invited), &mut rng()),
        Err(TableError::Closed)
    );
    assert_eq!(
        next.decide(&decline("b"), &mut rng()),
        Err(TableError::Closed)
    );
    // Not a rematch: nothing to decline.
    let (plain, _) = opened(Lobby::default());
    assert_eq!(
        plain.decide(&decline("a"), &mut rng()),
        Err(TableError::NotSeated)
    );
}

#[test]
fn a_rematchs_seats_are_kept_and_it_starts_when_every_person_is_back() {
    let (old, _) = finished();
    let mut log = old
        .rematch(OLD, &newcomer("b"), None, &[], &mut rng())
        .unwrap();
    let mut next = Table::from_events(&log).unwrap();
    assert_eq!(
        next.decide(&join("z", Joining::Invited), &mut rng()),
        Err(TableError::SeatReserved)
    );
    assert_eq!(
        next.decide(
            &TableCommand::SeatBot {
                account_id: "b".into(),
                level: Level::Basic,
                client_seed: None,
            },
            &mut rng()
        ),
        Err(TableError::StartsByItself)
    );
    let events = run(&mut next, &mut log, &join("a", Joining::Open));
    assert_eq!(next.seat_of(&"a".into()), Some(0));
    assert_eq!(next.status(), Status::Playing);
    let dealt = next.first_dealer.unwrap();
    assert_eq!(dealt, next.lobby.rematch_of.as_ref().unwrap().first_dealer);
    assert!(events.iter().any(|e| e.kind() == "round_started"));
}

#[test]
fn a_rematch_is_offered_once_by_a_player_of_a_game_that_is_over() {
    let (mut old, mut log) = finished();
    let offer = |who: &str| TableCommand::OfferRematch {
        account_id: who.into(),
        table_id: "next".into(),
    };
    assert_eq!(
        old.decide(&offer("z"), &mut rng()),
        Err(TableError::NotSeated)
    );
    run(&mut old, &mut log, &offer("a"));
    assert_eq!(old.lobby.rematch.as_deref(), Some("next"));
    assert_eq!(
        old.decide(&offer("b"), &mut rng()),
        Err(TableError::RematchOpen)
    );
    assert_eq!(
        old.rematch(OLD, &newcomer("b"), None, &[], &mut rng()),
        Err(TableError::RematchOpen)
    );
    // Not while the game runs, nor before it.
    let (running, _) = opened(Lobby::default());
    assert_eq!(
        running.decide(&offer("a"), &mut rng()),
        Err(TableError::GameNotOver)
    );
}

#[test]
fn a_private_table_is_seen_by_its_creator_its_players_and_its_rematchs_kept_seats_only() {
    let (mut t, mut log) = opened(Lobby {
        visibility: Visibility::Private,
        ..Lobby::default()
    });
    run(&mut t, &mut log, &join("b", Joining::Invited));
    for (who, sees) in [("a", true), ("b", true), ("z", false)] {
        assert_eq!(t.may_see(&who.into()), sees, "{who}");
    }
    // One who left is a stranger again.
    run(
        &mut t,
        &mut log,
        &TableCommand::Leave {
            account_id: "b".into(),
        },
    );
    assert!(!t.may_see(&"b".into()));
    // A public table: anyone.
    let (public, _) = opened(Lobby::default());
    assert!(public.may_see(&"z".into()));
    // A private game's rematch, before anyone but its opener is back: the
    // players of the game before it see it, nobody else.
    let (mut old, mut old_log) = opened(Lobby {
        visibility: Visibility::Private,
        ..Lobby::default()
    });
    run(&mut old, &mut old_log, &join("b", Joining::Invited));
    run(
        &mut old,
        &mut old_log,
        &TableCommand::Start {
            account_id: "a".into(),
        },
    );
    let resign = TableCommand::Resign {
        account_id: "a".into(),
    };
    run(&mut old, &mut old_log, &resign);
    assert_eq!(old.status(), Status::Finished);
    let next = Table::from_events(
        &old.rematch(OLD, &newcomer("b"), None, &[], &mut rng())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(next.lobby.visibility, Visibility::Private);
    for (who, sees) in [("a", true), ("b", true), ("z", false)] {
        assert_eq!(next.may_see(&who.into()), sees, "{who}");
    }
}

#[test]
fn asking_again_for_a_seat_one_has_is_already_seated_even_once_it_started() {
    let (old, _) = finished();
    let mut log = old
        .rematch(OLD, &newcomer("b"), None, &[], &mut rng())
        .unwrap();
    let mut next = Table::from_events(&log).unwrap();
    run(&mut next, &mut log, &join("a", Joining::Invited));
    assert_eq!(next.status(), Status::Playing, "a's join filled it");
    for who in ["a", "b"] {
        assert_eq!(
            next.decide(&join(who, Joining::Invited), &mut rng()),
            Err(TableError::AlreadySeated),
            "{who}"
        );
    }
    assert_eq!(
        next.decide(&join("z", Joining::Invited), &mut rng()),
        Err(TableError::NotWaiting)
    );
}
