//! Hidden cards stay hidden, whatever path an event takes: the findings of
//! an outside probe of a running server, one test each (the hash of a
//! redacted draw could be brute-forced in 54 tries; `turn_started` showed
//! the card just drawn to everyone).

use crate::support::{all_events, json_of, play, started_table, view};
use e2e::{frames, hash_of, read_until, spawn_app, TestApp};
use serde_json::{json, Value};
use store::StoredEvent;

/// Every card code of a 54-card French deck.
fn french_codes() -> Vec<String> {
    let ranks = [
        "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K",
    ];
    let mut codes: Vec<String> = ranks
        .iter()
        .flat_map(|r| ["C", "D", "H", "S"].map(|s| format!("{r}{s}")))
        .collect();
    codes.push("JK".into());
    codes
}

/// A 2-seat `classique` table (draw, then may play the card drawn) played
/// by taking a draw whenever one is open, until a draw leaves its drawer a
/// pending drawn card. Returns the table, the tokens, the drawer's seat
/// and the seq of that `turn_started`.
async fn until_a_pending_drawn_card(app: &TestApp) -> (String, Vec<String>, usize, i64) {
    let (id, tokens) = started_table(app, "classique", json!({}), 2).await;
    for _ in 0..400 {
        let v = view(app, &tokens[0], &id).await;
        let seat = v["current_seat"].as_u64().expect("a seat on turn") as usize;
        let mine = view(app, &tokens[seat], &id).await;
        let moves = mine["legal_moves"].as_array().unwrap();
        let mv = moves
            .iter()
            .find(|m| m["type"] == "draw")
            .or_else(|| moves.iter().find(|m| m["type"] != "challenge"))
            .expect("a move")
            .clone();
        let answer = json_of(play(app, &tokens[seat], &id, &mv, None).await, 200).await;
        let events = answer["events"].as_array().unwrap();
        if let Some(started) = events
            .iter()
            .find(|e| e["type"] == "turn_started" && e["data"]["pending"]["kind"] == "drawn")
        {
            assert!(
                started["data"]["pending"]["card"].is_string(),
                "the drawer sees its card"
            );
            return (id, tokens, seat, started["seq"].as_i64().unwrap());
        }
    }
    panic!("no draw left a pending card in 400 moves");
}

async fn stored_log(app: &TestApp, id: &str) -> Vec<StoredEvent> {
    store::events::read_after(&app.pool, id.parse().unwrap(), 0, 100_000)
        .await
        .unwrap()
}

#[tokio::test]
async fn hashes_give_drawn_cards_away_no_more_a_spectator_trying_every_code_finds_none() {
    let app = spawn_app().await;
    let (id, tokens, drawer, _) = until_a_pending_drawn_card(&app).await;
    let spectator = app.player_token("watcher").await;
    let log = stored_log(&app, &id).await;
    let codes = french_codes();
    let mut tried = 0;
    let other = 1 - drawer;
    for (token, own) in [(&spectator, None), (&tokens[other], Some(other))] {
        for e in all_events(&app, token, &id).await {
            if e["type"] != "cards_drawn" || e["data"]["seat"].as_u64() == own.map(|s| s as u64) {
                continue;
            }
            let sent = &e["data"];
            assert!(sent.get("cards").is_none(), "{e}");
            assert!(sent.get("salt").is_none(), "{e}");
            let guesses: Vec<Vec<&String>> = match sent["count"].as_u64().unwrap() {
                1 => codes.iter().map(|c| vec![c]).collect(),
                2 => codes
                    .iter()
                    .flat_map(|a| codes.iter().map(move |b| vec![a, b]))
                    .collect(),
                _ => continue,
            };
            let stored = &log[e["seq"].as_u64().unwrap() as usize - 1];
            for cards in guesses {
                let mut data =
                    json!({"cards": cards, "reason": sent["reason"], "seat": sent["seat"]});
                assert_ne!(hash_of(&e, &data), stored.hash, "found {cards:?} from {e}");
                data["count"] = sent["count"].clone();
                assert_ne!(hash_of(&e, &data), stored.hash, "found {cards:?} from {e}");
            }
            // What binds the server: the stored data, salt included.
            assert_eq!(hash_of(&e, &stored.data), stored.hash);
            tried += 1;
        }
    }
    assert!(tried > 0, "no draw of one or two cards by another seat");
}

#[tokio::test]
async fn turn_started_keeps_the_card_just_drawn_from_other_seats_and_spectators_on_every_path() {
    let app = spawn_app().await;
    let (id, tokens, drawer, seq) = until_a_pending_drawn_card(&app).await;
    let spectator = app.player_token("watcher").await;
    let stored = &stored_log(&app, &id).await[seq as usize - 1];
    let card = stored.data["pending"]["card"].as_str().unwrap();
    let hidden = |e: &Value, context: &str| {
        assert_eq!(e["seq"], seq, "{context}");
        assert_eq!(
            e["data"],
            json!({"seat": drawer, "pending": {"kind": "drawn"}, "frozen": stored.data["frozen"], "part": true}),
            "{context}: {e}"
        );
        assert!(!e.to_string().contains(&format!("\"{card}\"")), "{context}");
    };
    for (who, token) in [
        ("the other seat", &tokens[1 - drawer]),
        ("a spectator", &spectator),
    ] {
        let events = all_events(&app, token, &id).await;
        hidden(&events[seq as usize - 1], &format!("{who}: /events"));

        let url = app.url(&format!("/v1/tables/{id}/events/stream"));
        let mut res = app
            .client
            .get(format!("{url}?after=0"))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        let mut text = String::new();
        read_until(&mut res, &mut text, |t| frames(t).len() >= seq as usize).await;
        hidden(
            &frames(&text)[seq as usize - 1],
            &format!("{who}: stream after=0"),
        );

        let mut res = app
            .client
            .get(&url)
            .bearer_auth(token)
            .header("Last-Event-ID", (seq - 1).to_string())
            .send()
            .await
            .unwrap();
        let mut text = String::new();
        read_until(&mut res, &mut text, |t| !frames(t).is_empty()).await;
        hidden(&frames(&text)[0], &format!("{who}: stream Last-Event-ID"));
    }
    // The drawer is shown the whole event, salt included: its hash checks.
    let mine = &all_events(&app, &tokens[drawer], &id).await[seq as usize - 1];
    assert_eq!(mine["data"], stored.data);
    assert_eq!(hash_of(mine, &mine["data"]), stored.hash);
}

/// Reads a view stream until a frame of `version` or later: that view.
async fn view_frame_at(res: &mut reqwest::Response, version: i64) -> Value {
    let mut text = String::new();
    read_until(res, &mut text, |t| {
        frames(t)
            .iter()
            .any(|f| f["version"].as_i64() >= Some(version))
    })
    .await;
    frames(&text)
        .into_iter()
        .find(|f| f["version"].as_i64() >= Some(version))
        .unwrap()
}

/// A view's frame is made once per version and seat and shared by the
/// streams that show it: each seat still gets its own hand, and spectators
/// (however many) none.
#[tokio::test]
async fn view_streams_of_one_table_give_each_seat_its_hand_and_spectators_none() {
    let app = spawn_app().await;
    let (id, tokens) = started_table(&app, "classique", json!({}), 2).await;
    let watchers = [
        app.player_token("spectator_a").await,
        app.player_token("spectator_b").await,
    ];
    let open = |token: &str| {
        app.client
            .get(app.url(&format!("/v1/tables/{id}/view/stream")))
            .bearer_auth(token)
            .send()
    };
    let mut streams = Vec::new();
    for t in tokens.iter().chain(&watchers) {
        let res = open(t).await.unwrap();
        assert_eq!(res.status(), 200);
        streams.push(res);
    }
    // A move, so that every stream shows a version made after they opened.
    let seat = view(&app, &tokens[0], &id).await["current_seat"]
        .as_u64()
        .unwrap() as usize;
    let mine = view(&app, &tokens[seat], &id).await;
    let answer = play(
        &app,
        &tokens[seat],
        &id,
        &mine["legal_moves"][0],
        mine["version"].as_i64(),
    )
    .await;
    let version = json_of(answer, 200).await["version"].as_i64().unwrap();
    let mut seen = Vec::new();
    for res in &mut streams {
        seen.push(view_frame_at(res, version).await);
    }
    for (seat, frame) in seen[..2].iter().enumerate() {
        assert_eq!(frame["my_seat"], seat);
        let fresh = view(&app, &tokens[seat], &id).await;
        assert_eq!(frame["hand"], fresh["hand"], "seat {seat}'s own hand");
        assert!(!frame["hand"].as_array().unwrap().is_empty());
    }
    assert_ne!(seen[0]["hand"], seen[1]["hand"]);
    for frame in &seen[2..] {
        assert_eq!(frame["my_seat"], Value::Null);
        assert_eq!(
            frame["hand"],
            json!([]),
            "a spectator holds no hand: {frame}"
        );
        assert_eq!(frame["legal_moves"], json!([]));
    }
    assert_eq!(seen[2], seen[3], "every spectator is sent the same frame");
}
