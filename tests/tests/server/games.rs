//! For every preset, a whole game played over HTTP by seeded random choices
//! among the `legal_moves` the server lists, to `finished` with a result.
//! At every step: the cards of a round are conserved (hands + stock +
//! discard), and nothing answered to one player (view, move answer, events)
//! holds another player's cards. Every event a seat or a spectator is sent
//! either recomputes to its hash from what was sent, or lacks its salt, so
//! that no guess of the hidden cards recomputes it; once a round is over,
//! every hash a player was given recomputes from the replay's full data.
//! The deals come from the server's OS-seeded
//! rng (as in production), so games differ from run to run; the choices are
//! seeded.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::support::{all_events, get, json_of, play, started_table, view};
use e2e::{hash_of, spawn_app};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use store::chain::verify_chain;
use store::StoredEvent;

/// Most moves a test game may take before the test gives up.
const MAX_MOVES: usize = 4000;

/// Does `v` hold, anywhere, an array equal to `cards`?
fn holds_array(v: &Value, cards: &[Value]) -> bool {
    match v {
        Value::Array(a) => a.as_slice() == cards || a.iter().any(|x| holds_array(x, cards)),
        Value::Object(o) => o.values().any(|x| holds_array(x, cards)),
        _ => false,
    }
}

/// What `seat` may see of an event: no other hand, no stock, no card drawn
/// by another seat.
fn assert_redacted(event: &Value, seat: Option<u64>, context: &str) {
    let data = &event["data"];
    match event["type"].as_str().unwrap_or_default() {
        "round_started" => {
            let hands = data["hands"].as_object().expect("hands");
            for key in hands.keys() {
                assert_eq!(
                    Some(key.parse::<u64>().unwrap()),
                    seat,
                    "{context}: another hand in {event}"
                );
            }
            assert!(data.get("stock").is_none(), "{context}: stock in {event}");
        }
        "cards_drawn" if data["seat"].as_u64() != seat => {
            assert!(data.get("cards").is_none(), "{context}: cards in {event}");
        }
        "stock_reshuffled" => {
            assert!(data.get("stock").is_none(), "{context}: stock in {event}");
        }
        "turn_started" if data["seat"].as_u64() != seat => {
            assert!(
                data["pending"].get("card").is_none(),
                "{context}: another seat's drawn card in {event}"
            );
        }
        _ => {}
    }
}

/// An event sent to a reader against the stored one: the same hashes; shown
/// whole (its hash recomputes from what was sent), or redacted without its
/// salt, so that even the true hidden cards, added to what was sent, do not
/// recompute the hash.
fn assert_commitment_hides(sent: &Value, stored: &StoredEvent, context: &str) {
    assert_eq!(sent["hash"], stored.hash, "{context}: {sent}");
    assert_eq!(sent["prev_hash"], stored.prev_hash, "{context}: {sent}");
    assert_eq!(sent["v"], domain::EVENT_VERSION, "{context}: {sent}");
    if sent["data"] == stored.data {
        assert_eq!(hash_of(sent, &sent["data"]), stored.hash, "{context}");
        return;
    }
    assert!(
        sent["data"].get("salt").is_none(),
        "{context}: salt sent in {sent}"
    );
    let mut guess = stored.data.clone();
    guess.as_object_mut().unwrap().remove("salt");
    assert_ne!(
        hash_of(sent, &guess),
        stored.hash,
        "{context}: the hidden cards recompute the hash of {sent}"
    );
}

/// Nothing in `doc` (answered to `seat`) holds another player's hand.
fn assert_no_other_hand(doc: &Value, seat: usize, hands: &[Vec<Value>], context: &str) {
    for (other, hand) in hands.iter().enumerate() {
        // Short hands may equal innocent arrays (a draw of the same letters).
        if other != seat && hand.len() >= 3 {
            assert!(
                !holds_array(doc, hand),
                "{context}: seat {other}'s hand {hand:?} answered to seat {seat}"
            );
        }
    }
}

#[derive(Debug, Default)]
struct Played {
    moves: usize,
    rounds: u64,
    challenges: usize,
    events: usize,
}

async fn play_game(ruleset: &str, players: usize, options: Value, seed: u64) -> Played {
    let started = Instant::now();
    let app = spawn_app().await;
    let (id, tokens) = started_table(&app, ruleset, options, players).await;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut played = Played::default();
    let mut cards_in_round: BTreeMap<u64, usize> = BTreeMap::new();
    let mut last_answer: Option<(usize, Value)> = None;
    // Every event sent to a seat during the game, with that seat.
    let mut given: Vec<(usize, Value)> = Vec::new();

    loop {
        let mut views = Vec::new();
        for t in &tokens {
            views.push(view(&app, t, &id).await);
        }
        let version = views[0]["version"].as_i64().unwrap();
        let status = views[0]["status"].as_str().unwrap().to_owned();
        let hands: Vec<Vec<Value>> = views
            .iter()
            .map(|v| v["hand"].as_array().unwrap().clone())
            .collect();
        for (seat, v) in views.iter().enumerate() {
            let context = format!("{ruleset} v{version} view of seat {seat}");
            assert_eq!(v["version"], version, "{context}");
            assert_eq!(v["my_seat"], seat, "{context}");
            assert_eq!(
                v["players"][seat]["hand_size"].as_u64().unwrap() as usize,
                hands[seat].len(),
                "{context}"
            );
            if status == "playing" {
                let total = v["players"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| p["hand_size"].as_u64().unwrap() as usize)
                    .sum::<usize>()
                    + v["stock_size"].as_u64().unwrap() as usize
                    + v["discard_size"].as_u64().unwrap() as usize;
                let round = v["round"].as_u64().unwrap();
                let expected = *cards_in_round.entry(round).or_insert(total);
                assert_eq!(total, expected, "{context}: cards of round {round}");
                if v["pending"]["card"].is_string() {
                    assert_eq!(v["current_seat"], seat, "{context}: a drawn card shown");
                }
                // The seat's own hand may equal another's (letters repeat:
                // R T T in both hands of a 2-player Amérix), so it is left
                // out of the search; no other field of a view holds cards.
                let mut shown = v.clone();
                shown.as_object_mut().unwrap().remove("hand");
                assert_no_other_hand(&shown, seat, &hands, &context);
            }
        }
        // The last move's answer held the same view as a fresh GET, and none
        // of the hands now dealt.
        if let Some((seat, answer)) = last_answer.take() {
            assert_eq!(answer["view"], views[seat], "{ruleset}: answer's view");
            let secret: Vec<Value> = answer["events"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|e| e["type"] != "round_ended")
                .cloned()
                .collect();
            let context = format!("{ruleset} v{version} last answer to seat {seat}");
            assert_no_other_hand(&Value::Array(secret), seat, &hands, &context);
        }
        if status == "finished" {
            let result = &views[0]["result"];
            assert!(result["ranking"]
                .as_array()
                .is_some_and(|r| r.len() == players));
            assert!(
                !result["winners"].as_array().unwrap().is_empty(),
                "{result}"
            );
            for v in &views {
                assert!(v["legal_moves"].as_array().unwrap().is_empty());
                assert!(v["current_seat"].is_null());
            }
            break;
        }
        assert_eq!(status, "playing");

        // Choose: a challenge half of the time when one is open, else a
        // move of the seat on turn, a play four times in five when there is
        // one, as a player would. Uniformly random moves draw so often that
        // a 757 round can last thousands of moves (3 players: 9 games in
        // 1,000 past 4,000 moves); with plays preferred, none in 3,000
        // passed 870 in any preset of these tests.
        let mut open = Vec::new();
        let mut challenges = Vec::new();
        for (seat, v) in views.iter().enumerate() {
            for mv in v["legal_moves"].as_array().unwrap() {
                if mv["type"] == "challenge" {
                    challenges.push((seat, mv.clone()));
                } else {
                    open.push((seat, mv.clone()));
                }
            }
        }
        let (seat, mv) = if !challenges.is_empty() && (open.is_empty() || rng.gen_bool(0.5)) {
            played.challenges += 1;
            challenges.swap_remove(rng.gen_range(0..challenges.len()))
        } else {
            assert!(!open.is_empty(), "{ruleset} v{version}: nobody can move");
            let plays: Vec<usize> = (0..open.len())
                .filter(|&i| open[i].1["type"] == "play")
                .collect();
            let i = match plays.is_empty() || rng.gen_bool(0.2) {
                true => rng.gen_range(0..open.len()),
                false => plays[rng.gen_range(0..plays.len())],
            };
            open.swap_remove(i)
        };
        let answer = json_of(
            play(&app, &tokens[seat], &id, &mv, Some(version)).await,
            200,
        )
        .await;
        let new_version = answer["version"].as_i64().unwrap();
        let events = answer["events"].as_array().unwrap();
        assert!(!events.is_empty());
        for (i, e) in events.iter().enumerate() {
            assert_eq!(e["seq"].as_i64().unwrap(), version + 1 + i as i64);
            assert_redacted(e, Some(seat as u64), &format!("{ruleset} move answer"));
        }
        assert_eq!(events.last().unwrap()["seq"].as_i64().unwrap(), new_version);
        given.extend(events.iter().map(|e| (seat, e.clone())));
        // Against the hands before the move (and, next time round, after
        // it). A round's end shows every hand: that is public.
        let secret: Vec<Value> = events
            .iter()
            .filter(|e| e["type"] != "round_ended")
            .cloned()
            .collect();
        let context = format!("{ruleset} v{new_version} answer to seat {seat}");
        assert_no_other_hand(&Value::Array(secret), seat, &hands, &context);
        last_answer = Some((seat, answer));
        played.moves += 1;
        assert!(played.moves < MAX_MOVES, "{ruleset}: the game does not end");
    }

    // The feeds: each player's is complete, in order, redacted for them.
    let mut full_len = None;
    for (seat, t) in tokens.iter().enumerate() {
        let events = all_events(&app, t, &id).await;
        for (i, e) in events.iter().enumerate() {
            assert_eq!(e["seq"].as_u64().unwrap(), i as u64 + 1);
            assert_redacted(e, Some(seat as u64), &format!("{ruleset} /events"));
        }
        assert_eq!(*full_len.get_or_insert(events.len()), events.len());
        let n = events.len();
        assert_eq!(events[n - 2]["type"], "game_ended");
        assert_eq!(events[n - 1]["type"], "seed_revealed");
        given.extend(events.into_iter().map(|e| (seat, e)));
    }
    let log = store::events::read_after(&app.pool, id.parse().unwrap(), 0, 1_000_000)
        .await
        .unwrap();
    verify_chain(&log).expect("the hash chain holds");

    // Hashes hide: for every seat and a spectator.
    let spectator = app.player_token(&format!("watch_{seed}")).await;
    for e in all_events(&app, &spectator, &id).await {
        assert_redacted(&e, None, &format!("{ruleset} spectator /events"));
        let stored = &log[e["seq"].as_u64().unwrap() as usize - 1];
        assert_commitment_hides(&e, stored, &format!("{ruleset} spectator"));
    }
    for (seat, e) in &given {
        let stored = &log[e["seq"].as_u64().unwrap() as usize - 1];
        assert_commitment_hides(e, stored, &format!("{ruleset} seat {seat}"));
    }
    // Once a round is over, every hash its players were given recomputes
    // from the replay's full data (data and salt).
    let rounds = log.iter().filter(|e| e.kind == "round_ended").count();
    let mut checked = 0;
    for n in 1..=rounds {
        let replay = json_of(
            get(
                &app,
                &tokens[0],
                &format!("/v1/tables/{id}/rounds/{n}/replay"),
            )
            .await,
            200,
        )
        .await;
        for full in replay["events"].as_array().unwrap() {
            assert!(full["data"]["salt"].is_string(), "{full}");
            for (_, e) in given.iter().filter(|(_, e)| e["seq"] == full["seq"]) {
                assert_eq!(hash_of(e, &full["data"]), e["hash"].as_str().unwrap());
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "{ruleset}: no hash checked against a replay");
    played.events = log.len();
    played.rounds = log.iter().filter(|e| e.kind == "round_ended").count() as u64;
    eprintln!(
        "{ruleset}: {players} players, {} moves, {} rounds, {} events, {} challenges, {:.1?}",
        played.moves,
        played.rounds,
        played.events,
        played.challenges,
        started.elapsed()
    );
    played
}

#[tokio::test]
async fn classique_plays_to_the_end_over_http() {
    let p = play_game("classique", 3, json!({"target": 60}), 1).await;
    assert!(p.rounds >= 1);
}

#[tokio::test]
async fn moderne_plays_to_the_end_over_http() {
    let p = play_game("moderne", 2, json!({"target": 60}), 2).await;
    assert!(p.rounds >= 1);
}

#[tokio::test]
async fn base_plays_to_the_end_over_http() {
    let p = play_game("base", 3, json!({"target": 30}), 3).await;
    assert!(p.rounds >= 1);
}

#[tokio::test]
async fn amerix_plays_to_the_end_over_http() {
    let p = play_game("amerix", 2, json!({"target": 40}), 4).await;
    assert!(p.rounds >= 1);
}

#[tokio::test]
async fn le_757_plays_to_the_end_over_http() {
    let p = play_game("757", 3, json!({"target": 40}), 5).await;
    assert!(p.rounds >= 1);
}
