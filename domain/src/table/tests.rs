//! The lobby and the table's life: joining, leaving, starting, and the
//! game's commands through the table.

use super::*;
use crate::event::Event;
use crate::event::Pending;
use rand::SeedableRng;

fn rng() -> rand::rngs::StdRng {
    rand::rngs::StdRng::seed_from_u64(1)
}

fn join(id: &str) -> TableCommand {
    TableCommand::Join {
        account_id: id.into(),
        joining: crate::table::Joining::Open,
        guest: false,
        client_seed: None,
    }
}

fn new_table(seats: usize) -> Table {
    let events = Table::create("moderne", &Default::default(), seats, None, &"a".into()).unwrap();
    Table::from_events(&events).unwrap()
}

#[test]
fn the_creator_sits_at_seat_zero_and_others_take_free_seats() {
    let mut t = new_table(3);
    assert_eq!(t.seat_of(&"a".into()), Some(0));
    t.execute(&join("b"), &mut rng()).unwrap();
    t.execute(&join("c"), &mut rng()).unwrap();
    assert_eq!(t.decide(&join("d"), &mut rng()), Err(TableError::Full));
    assert_eq!(
        t.decide(&join("b"), &mut rng()),
        Err(TableError::AlreadySeated)
    );
    t.execute(
        &TableCommand::Leave {
            account_id: "b".into(),
        },
        &mut rng(),
    )
    .unwrap();
    t.execute(&join("d"), &mut rng()).unwrap();
    assert_eq!(t.seat_of(&"d".into()), Some(1));
}

#[test]
fn only_the_creator_starts_with_enough_players() {
    let mut t = new_table(4);
    let start = |id: &str| TableCommand::Start {
        account_id: id.into(),
    };
    assert_eq!(
        t.decide(&start("a"), &mut rng()),
        Err(TableError::NotEnoughPlayers { have: 1, need: 2 })
    );
    t.execute(&join("b"), &mut rng()).unwrap();
    assert_eq!(
        t.decide(&start("b"), &mut rng()),
        Err(TableError::NotCreator)
    );
    let events = t.execute(&start("a"), &mut rng()).unwrap();
    assert_eq!(events[0].kind(), "game_started");
    assert_eq!(events[1].kind(), "round_started");
    assert_eq!(t.status(), Status::Playing);
    assert_eq!(
        t.decide(&join("c"), &mut rng()),
        Err(TableError::NotWaiting)
    );
}

#[test]
fn seats_are_compacted_at_the_start() {
    let mut t = new_table(4);
    t.execute(&join("b"), &mut rng()).unwrap();
    t.execute(&join("c"), &mut rng()).unwrap();
    t.execute(
        &TableCommand::Leave {
            account_id: "b".into(),
        },
        &mut rng(),
    )
    .unwrap();
    t.execute(
        &TableCommand::Start {
            account_id: "a".into(),
        },
        &mut rng(),
    )
    .unwrap();
    assert_eq!(t.seat_of(&"c".into()), Some(1));
    assert_eq!(t.game.as_ref().unwrap().seats(), 2);
}

#[test]
fn the_log_round_trips_through_json() {
    let mut log = Table::create("757", &Default::default(), 3, None, &"a".into()).unwrap();
    let mut t = Table::from_events(&log).unwrap();
    for cmd in [
        join("b"),
        join("c"),
        TableCommand::Start {
            account_id: "a".into(),
        },
    ] {
        log.extend(t.execute(&cmd, &mut rng()).unwrap());
    }
    let reread: Vec<TableEvent> = log
        .iter()
        .map(|e| TableEvent::from_parts(e.kind(), e.data()).unwrap())
        .collect();
    assert_eq!(reread, log);
    assert_eq!(Table::from_events(&reread).unwrap(), t);
    assert_eq!(t.version, log.len() as u64);
}

fn turn_started(data: &str) -> Result<TableEvent, serde_json::Error> {
    TableEvent::parse("turn_started", data)
}

fn pending_of(data: &str) -> Pending {
    match turn_started(data) {
        Ok(TableEvent::Game(Event::TurnStarted { pending, .. })) => pending,
        other => panic!("{data}: {other:?}"),
    }
}

#[test]
fn a_pending_constraint_is_read_in_any_field_order() {
    for pending in [
        Pending::None,
        Pending::Attack {
            count: 2,
            per_card: 3,
        },
        Pending::Draw { total: 4 },
        Pending::MustReplay { penalty: 2 },
        Pending::MayReplay,
        Pending::Drawn {
            card: "10H".parse().unwrap(),
        },
    ] {
        let event = TableEvent::Game(Event::TurnStarted {
            seat: 1,
            pending,
            frozen: true,
        });
        let data = event.data().to_string();
        assert_eq!(TableEvent::parse("turn_started", &data).unwrap(), event);
    }
    let p = r#"{"seat":0,"frozen":false,"pending":{"per_card":2,"count":1,"kind":"attack"}}"#;
    assert_eq!(
        pending_of(p),
        Pending::Attack {
            count: 1,
            per_card: 2
        }
    );
    // Unknown fields are ignored, as serde's derive does.
    let p = r#"{"seat":0,"frozen":false,"pending":{"kind":"draw","why":[1,{"a":2}],"total":6}}"#;
    assert_eq!(pending_of(p), Pending::Draw { total: 6 });
}

#[test]
fn a_bad_pending_constraint_is_refused_with_its_reason() {
    for (data, why) in [
        (
            r#"{"seat":0,"frozen":false,"pending":{"total":6}}"#,
            "missing field `kind`",
        ),
        (
            r#"{"seat":0,"frozen":false,"pending":{"kind":"draw"}}"#,
            "missing field `total`",
        ),
        (
            r#"{"seat":0,"frozen":false,"pending":{"kind":"attack","count":1}}"#,
            "missing field `per_card`",
        ),
        (
            r#"{"seat":0,"frozen":false,"pending":{"kind":"soon"}}"#,
            "unknown variant `soon`",
        ),
        (
            r#"{"seat":0,"frozen":false,"pending":{"kind":"draw","total":1,"total":2}}"#,
            "duplicate field `total`",
        ),
        (
            r#"{"seat":0,"frozen":false,"pending":{"kind":"drawn","card":"ZZ"}}"#,
            "unknown card code",
        ),
        (
            r#"{"seat":0,"frozen":false,"pending":"none"}"#,
            "a pending constraint",
        ),
    ] {
        let err = turn_started(data).unwrap_err().to_string();
        assert!(err.contains(why), "{data}: {err}");
    }
}

#[test]
fn a_stored_event_is_its_type_and_data_or_an_error() {
    let played = r#"{"announce":false,"card":"2H","seat":0}"#;
    assert!(matches!(
        TableEvent::parse("card_played", played),
        Ok(TableEvent::Game(Event::CardPlayed(_)))
    ));
    assert!(matches!(
        TableEvent::parse("player_left", r#"{"seat":2}"#),
        Ok(TableEvent::PlayerLeft { seat: 2 })
    ));
    for (kind, data, why) in [
        ("card_flipped", played, "unknown variant `card_flipped`"),
        (
            "card_played",
            r#"{"announce":false,"seat":0}"#,
            "missing field `card`",
        ),
        ("card_played", &format!("{played} x"), "trailing characters"),
        ("card_played", &played[..20], "EOF"),
        ("turn_passed", "", "EOF"),
    ] {
        let err = TableEvent::parse(kind, data).unwrap_err().to_string();
        assert!(err.contains(why), "{kind} {data}: {err}");
    }
    // Surrounding white space is JSON's own.
    assert!(TableEvent::parse("turn_passed", " {\"seat\": 1}\n").is_ok());
}

#[test]
fn every_table_event_is_named_as_it_is_serialised_and_read_back() {
    let mut events = Table::create("moderne", &Default::default(), 2, None, &"a".into()).unwrap();
    let joined = events[1].clone();
    let TableEvent::PlayerJoined(seated) = &joined else {
        panic!("{joined:?}")
    };
    events.extend([
        TableEvent::PlayerLeft { seat: 1 },
        TableEvent::GameStarted {
            players: vec![seated.clone()],
        },
        TableEvent::TurnTimedOut {
            seat: 0,
            deadline: "2025-01-31T18:04:05.000000Z".into(),
        },
        TableEvent::SeatAway { seat: 0 },
        TableEvent::SeatBack { seat: 0 },
        TableEvent::PlayerResigned { seat: 1 },
        TableEvent::GameAborted { by: 0 },
        TableEvent::BotMoved {
            seat: 1,
            bot: "basic@1".into(),
            reason: BotReason::Resigned,
            seed: 7,
            playouts: Some(500),
        },
        TableEvent::BotSeated {
            seat: 1,
            level: crate::bots::Level::Strong,
            client_seed: None,
        },
        TableEvent::RematchOffered {
            seat: 0,
            table_id: "9d7c3f2e-3f0a-4a57-8a3e-2b1c0d9e8f70".into(),
        },
    ]);
    let mut kinds: Vec<&str> = events.iter().map(TableEvent::kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(kinds.len(), 12, "every table event of its own: {kinds:?}");
    for e in &events {
        let json = e.to_json();
        assert_eq!(json["type"], e.kind(), "{e:?}");
        assert!(TableEvent::is_own(e.kind()));
        assert_eq!(&TableEvent::from_parts(e.kind(), e.data()).unwrap(), e);
    }
    assert!(
        !TableEvent::is_own("game"),
        "the game's events are not a kind"
    );
    assert!(!TableEvent::is_own("card_played"));
}

#[test]
fn moves_come_from_seated_players_only() {
    let mut t = new_table(2);
    t.execute(&join("b"), &mut rng()).unwrap();
    t.execute(
        &TableCommand::Start {
            account_id: "a".into(),
        },
        &mut rng(),
    )
    .unwrap();
    let mv = TableCommand::Move {
        account_id: "z".into(),
        mv: Move::Draw {},
    };
    assert_eq!(t.decide(&mv, &mut rng()), Err(TableError::NotSeated));
}

#[test]
fn d42_a_bot_seat_has_no_account_in_the_log_and_older_logs_still_read() {
    let bot = Seated::bot(2, crate::bots::Level::Basic, None);
    let written = serde_json::to_value(&bot).unwrap();
    assert_eq!(written["account_id"], serde_json::Value::Null, "{written}");
    assert_eq!(serde_json::from_value::<Seated>(written).unwrap(), bot);
    // An older log wrote the engine's id.
    let older = serde_json::json!({"seat": 2, "account_id": "bot:2", "username": "basic bot", "bot": "basic"});
    assert_eq!(serde_json::from_value::<Seated>(older).unwrap(), bot);
    // A person always has an account.
    let nobody = serde_json::json!({"seat": 0, "account_id": null, "username": "a"});
    assert!(serde_json::from_value::<Seated>(nobody).is_err());
}

#[test]
fn a_seated_person_is_named_in_the_log_by_account_id_only_and_older_names_are_not_read() {
    // Format 3: no name a hash would bind, so erasing an account forgets
    // it without changing any hash (docs/API.md "Accounts").
    let events = Table::create("classique", &Default::default(), 2, None, &"acc-1".into()).unwrap();
    let joined = events[1].sealed_data(crate::Salt::draw(&mut rng()));
    assert_eq!(
        joined.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["account_id", "salt", "seat"],
        "{joined}"
    );
    // Formats 1 and 2 wrote the name; it parses, and is not kept.
    let v2 = r#"{"seat": 0, "account_id": "acc-1", "username": "alice", "salt": "00"}"#;
    let read = TableEvent::read("player_joined", 2, v2).unwrap();
    assert_eq!(read, events[1]);
    assert!(!format!("{read:?}").contains("alice"));
}
