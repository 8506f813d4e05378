//! Tables over HTTP: rule sets, opening, listing, the lobby, views, moves,
//! idempotency and the event feed, with their error answers.

use std::time::{Duration, Instant};

use crate::support::{
    all_events, create_table, delete, get, json_of, play, post, post_empty, started_table, view,
    view_poll,
};
use e2e::{assert_problem, spawn_app};
use serde_json::{json, Value};

#[tokio::test]
async fn rulesets_list_the_five_presets_without_authentication() {
    let app = spawn_app().await;
    let res = app
        .client
        .get(app.url("/v1/rulesets"))
        .send()
        .await
        .unwrap();
    let sets = json_of(res, 200).await;
    let ids: Vec<&str> = sets
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["classique", "moderne", "base", "amerix", "757"]);
    for s in sets.as_array().unwrap() {
        assert!(s["name"].is_string() && s["description"].is_string());
        assert!(
            s["rules"].is_object() && s["rules"]["deck"].is_string(),
            "{s}"
        );
    }
}

#[tokio::test]
async fn opening_a_table_seats_the_creator() {
    let app = spawn_app().await;
    let alice = app.player_token("alice").await;
    let res = post(
        &app,
        &alice,
        "/v1/tables",
        &json!({"ruleset": "classique", "options": {"jokers": true}, "seats": 4}),
    )
    .await;
    assert_eq!(res.status(), 201);
    let location = res.headers()["location"].to_str().unwrap().to_owned();
    let etag = res.headers()["etag"].to_str().unwrap().to_owned();
    let table: Value = res.json().await.unwrap();
    let id = table["id"].as_str().unwrap();
    assert_eq!(location, format!("/v1/tables/{id}"));
    assert_eq!(etag, "\"2\"");
    assert_eq!(table["ruleset"], "classique");
    assert_eq!(table["status"], "waiting");
    assert_eq!(table["seats"], 4);
    assert_eq!(table["version"], 2);
    assert_eq!(table["round"], Value::Null);
    assert_eq!(table["rules"]["deck"], "french54", "jokers on: {table}");
    assert_eq!(table["players"].as_array().unwrap().len(), 1);
    assert_eq!(table["players"][0]["seat"], 0);
    assert_eq!(table["players"][0]["username"], "alice");
    assert_eq!(table["created_by"], table["players"][0]["account_id"]);

    let again = json_of(get(&app, &alice, &location).await, 200).await;
    assert_eq!(again, table);

    // Without a token: 401.
    let res = app
        .post_json("/v1/tables", &json!({"ruleset": "classique", "seats": 2}))
        .await;
    assert_problem(res, 401, "unauthorized").await;
}

#[tokio::test]
async fn impossible_tables_are_refused_with_the_engines_reason() {
    let app = spawn_app().await;
    let alice = app.player_token("alice").await;
    for (body, code) in [
        (json!({"ruleset": "poker", "seats": 2}), "invalid_rules"),
        (json!({"ruleset": "classique", "seats": 1}), "invalid_rules"),
        (
            json!({"ruleset": "classique", "seats": 11}),
            "invalid_rules",
        ),
        (
            json!({"ruleset": "moderne", "seats": 4000000000u64}),
            "invalid_rules",
        ),
        (
            json!({"ruleset": "classique", "options": {"colour": "red"}, "seats": 2}),
            "invalid_rules",
        ),
        (
            json!({"ruleset": "classique", "options": {"jokers": "yes"}, "seats": 2}),
            "invalid_rules",
        ),
        (json!({"ruleset": "classique"}), "invalid_body"),
        (json!({"ruleset": "classique", "seats": -2}), "invalid_body"),
        (
            json!({"ruleset": "classique", "seats": 2, "x": 1}),
            "invalid_body",
        ),
    ] {
        let res = post(&app, &alice, "/v1/tables", &body).await;
        let problem = assert_problem(res, 422, code).await;
        assert!(!problem["detail"].as_str().unwrap().is_empty(), "{body}");
    }
    let problem = assert_problem(
        post(
            &app,
            &alice,
            "/v1/tables",
            &json!({"ruleset": "poker", "seats": 2}),
        )
        .await,
        422,
        "invalid_rules",
    )
    .await;
    assert!(problem["detail"].as_str().unwrap().contains("poker"));
    // Nothing was opened.
    let page = json_of(get(&app, &alice, "/v1/tables").await, 200).await;
    assert_eq!(page["tables"], json!([]));
}

#[tokio::test]
async fn the_lobby_join_leave_start_and_their_refusals() {
    let app = spawn_app().await;
    let alice = app.player_token("alice").await;
    let bob = app.player_token("bob").await;
    let carol = app.player_token("carol").await;
    let dave = app.player_token("dave").await;
    let table = create_table(&app, &alice, "moderne", json!({}), 3).await;
    let id = table["id"].as_str().unwrap();
    let path = |p: &str| format!("/v1/tables/{id}{p}");

    // Start alone: not enough players. Bob is not the creator.
    assert_problem(
        post_empty(&app, &alice, &path("/start")).await,
        409,
        "not_enough_players",
    )
    .await;
    let joined = json_of(post_empty(&app, &bob, &path("/players")).await, 200).await;
    assert_eq!(joined["players"][1]["username"], "bob");
    assert_eq!(joined["players"][1]["seat"], 1);
    assert_problem(
        post_empty(&app, &bob, &path("/players")).await,
        409,
        "already_seated",
    )
    .await;
    assert_problem(
        post_empty(&app, &bob, &path("/start")).await,
        403,
        "not_creator",
    )
    .await;
    json_of(post_empty(&app, &carol, &path("/players")).await, 200).await;
    assert_problem(
        post_empty(&app, &dave, &path("/players")).await,
        409,
        "table_full",
    )
    .await;

    // Bob leaves: seat 1 is free and dave takes it; dave cannot leave twice.
    let left = json_of(delete(&app, &bob, &path("/players/me")).await, 200).await;
    assert_eq!(left["players"].as_array().unwrap().len(), 2);
    assert_problem(
        delete(&app, &bob, &path("/players/me")).await,
        403,
        "not_seated",
    )
    .await;
    let joined = json_of(post_empty(&app, &dave, &path("/players")).await, 200).await;
    assert_eq!(joined["players"][1]["username"], "dave");

    // Moves before the start.
    assert_problem(
        play(&app, &alice, id, &json!({"type": "draw"}), None).await,
        409,
        "game_not_started",
    )
    .await;

    let started = json_of(post_empty(&app, &alice, &path("/start")).await, 200).await;
    assert_eq!(started["status"], "playing");
    assert_eq!(started["round"], 1);
    let hand_sizes: Vec<u64> = started["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["hand_size"].as_u64().unwrap())
        .collect();
    assert_eq!(hand_sizes.len(), 3);
    assert!(hand_sizes.iter().all(|n| *n >= 7), "{started}");
    assert_problem(
        post_empty(&app, &alice, &path("/start")).await,
        409,
        "table_not_waiting",
    )
    .await;
    assert_problem(
        post_empty(&app, &bob, &path("/players")).await,
        409,
        "table_not_waiting",
    )
    .await;
    assert_problem(
        delete(&app, &dave, &path("/players/me")).await,
        409,
        "table_not_waiting",
    )
    .await;

    // Unknown and malformed ids.
    let unknown = format!("/v1/tables/{}", uuid::Uuid::new_v4());
    for p in ["", "/view", "/events", "/players"] {
        let res = if p == "/players" {
            post_empty(&app, &alice, &format!("{unknown}{p}")).await
        } else {
            get(&app, &alice, &format!("{unknown}{p}")).await
        };
        assert_problem(res, 404, "not_found").await;
    }
    assert_problem(
        play(
            &app,
            &alice,
            &uuid::Uuid::new_v4().to_string(),
            &json!({"type": "draw"}),
            None,
        )
        .await,
        404,
        "not_found",
    )
    .await;
    assert_problem(
        get(&app, &alice, "/v1/tables/not-a-uuid").await,
        404,
        "not_found",
    )
    .await;
}

#[tokio::test]
async fn lists_filter_by_status_and_membership_and_page_by_cursor() {
    let app = spawn_app().await;
    let alice = app.player_token("alice").await;
    let bob = app.player_token("bob").await;
    let mut ids = Vec::new();
    for _ in 0..5 {
        let t = create_table(&app, &alice, "classique", json!({}), 2).await;
        ids.push(t["id"].as_str().unwrap().to_owned());
    }
    for id in &ids[1..3] {
        json_of(
            post_empty(&app, &bob, &format!("/v1/tables/{id}/players")).await,
            200,
        )
        .await;
    }
    json_of(
        post_empty(&app, &alice, &format!("/v1/tables/{}/start", ids[2])).await,
        200,
    )
    .await;

    // Pages of 2, in creation order, cover everything once.
    let mut seen = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let q = match &after {
            Some(c) => format!("/v1/tables?limit=2&after={c}"),
            None => "/v1/tables?limit=2".into(),
        };
        let page = json_of(get(&app, &bob, &q).await, 200).await;
        for t in page["tables"].as_array().unwrap() {
            seen.push(t["id"].as_str().unwrap().to_owned());
        }
        match page["next"].as_str() {
            Some(c) => after = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen, ids);

    let ids_of = |page: &Value| -> Vec<String> {
        page["tables"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let mine = json_of(get(&app, &bob, "/v1/tables?mine=true").await, 200).await;
    assert_eq!(ids_of(&mine), ids[1..3]);
    let t = &mine["tables"][1];
    assert_eq!(t["status"], "playing");
    assert_eq!(t["players"][1]["username"], "bob");
    assert_eq!(t["seats"], 2);
    let waiting_mine = json_of(
        get(&app, &bob, "/v1/tables?mine=true&status=waiting").await,
        200,
    )
    .await;
    assert_eq!(ids_of(&waiting_mine), ids[1..2]);
    let waiting = json_of(get(&app, &bob, "/v1/tables?status=waiting").await, 200).await;
    assert_eq!(waiting["tables"].as_array().unwrap().len(), 4);
    assert_eq!(waiting["next"], Value::Null);
    // Bob leaves: no longer his.
    json_of(
        delete(&app, &bob, &format!("/v1/tables/{}/players/me", ids[1])).await,
        200,
    )
    .await;
    let mine = json_of(get(&app, &bob, "/v1/tables?mine=true").await, 200).await;
    assert_eq!(ids_of(&mine), ids[2..3]);

    for q in [
        "limit=0",
        "limit=101",
        "limit=x",
        "status=lost",
        "after=garbage",
        "after=12.nope",
        "mine=maybe",
    ] {
        let res = get(&app, &bob, &format!("/v1/tables?{q}")).await;
        assert_problem(res, 400, "invalid_query").await;
    }
}

#[tokio::test]
async fn views_show_ones_own_hand_only_with_an_etag() {
    let app = spawn_app().await;
    let (id, tokens) = started_table(&app, "classique", json!({}), 2).await;
    let eve = app.player_token("eve").await;

    let res = get(&app, &tokens[0], &format!("/v1/tables/{id}/view")).await;
    let etag = res.headers()["etag"].to_str().unwrap().to_owned();
    let v0 = json_of(res, 200).await;
    let v1 = view(&app, &tokens[1], &id).await;
    assert_eq!(etag, format!("\"{}\"", v0["version"]));
    assert_eq!(v0["table_id"], id.as_str());
    assert_eq!(v0["status"], "playing");
    assert_eq!(v0["my_seat"], 0);
    assert_eq!(v1["my_seat"], 1);
    assert_eq!(v0["hand"].as_array().unwrap().len(), 7);
    assert_eq!(v0["players"][0]["hand_size"], 7);
    assert_ne!(v0["hand"], v1["hand"]);
    assert!(v0["players"][1]["username"].is_string());
    let on_turn = v0["current_seat"].as_u64().unwrap() as usize;
    let views = [&v0, &v1];
    assert!(!views[on_turn]["legal_moves"].as_array().unwrap().is_empty());
    assert!(views[1 - on_turn]["legal_moves"]
        .as_array()
        .unwrap()
        .is_empty());

    // A spectator: no hand, no moves, no seat.
    let spectator = view(&app, &eve, &id).await;
    assert_eq!(spectator["my_seat"], Value::Null);
    assert_eq!(spectator["hand"], json!([]));
    assert_eq!(spectator["legal_moves"], json!([]));
    assert_eq!(spectator["players"], v0["players"]);
    assert_eq!(spectator["pending"]["card"], Value::Null);

    // If-None-Match: 304 while nothing changed, 200 after a move.
    let res = app
        .client
        .get(app.url(&format!("/v1/tables/{id}/view")))
        .bearer_auth(&tokens[0])
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 304);
    assert_eq!(res.headers()["etag"].to_str().unwrap(), etag);
    let mv = views[on_turn]["legal_moves"][0].clone();
    json_of(play(&app, &tokens[on_turn], &id, &mv, None).await, 200).await;
    let res = app
        .client
        .get(app.url(&format!("/v1/tables/{id}/view")))
        .bearer_auth(&tokens[0])
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

#[tokio::test]
async fn refused_moves_say_why_and_append_nothing() {
    let app = spawn_app().await;
    let (id, tokens) = started_table(&app, "classique", json!({}), 2).await;
    let eve = app.player_token("eve").await;
    let v0 = view(&app, &tokens[0], &id).await;
    let version = v0["version"].as_i64().unwrap();
    let on_turn = v0["current_seat"].as_u64().unwrap() as usize;
    let waiting = 1 - on_turn;
    let waiting_view = view(&app, &tokens[waiting], &id).await;
    let on_turn_view = view(&app, &tokens[on_turn], &id).await;

    let refusals: Vec<(&str, Value, u16, &str)> = vec![
        ("bad shape", json!({"type": "fold"}), 422, "invalid_move"),
        ("no type", json!({"card": "8H"}), 422, "invalid_move"),
        (
            "unknown card",
            json!({"type": "play", "card": "1Z"}),
            422,
            "invalid_move",
        ),
        (
            "unknown suit",
            json!({"type": "play", "card": "8H", "suit": "X"}),
            422,
            "invalid_move",
        ),
        ("not a move", json!("draw"), 422, "invalid_move"),
        // Every move type refuses a field it does not have, alike.
        (
            "play, unknown field",
            json!({"type": "play", "card": "8H", "seat": 1}),
            422,
            "invalid_move",
        ),
        (
            "draw, unknown field",
            json!({"type": "draw", "seat": 1}),
            422,
            "invalid_move",
        ),
        (
            "pass, unknown field",
            json!({"type": "pass", "card": "8H"}),
            422,
            "invalid_move",
        ),
        (
            "challenge, unknown field",
            json!({"type": "challenge", "seat": 0, "card": "8H"}),
            422,
            "invalid_move",
        ),
    ];
    for (what, mv, status, code) in refusals {
        let res = play(&app, &tokens[on_turn], &id, &mv, None).await;
        let p = assert_problem(res, status, code).await;
        let detail = p["detail"].as_str().unwrap();
        assert!(!detail.is_empty(), "{what}");
        if what.ends_with("unknown field") {
            assert!(detail.contains("unknown field"), "{what}: {detail}");
        }
    }
    // Out of turn.
    let mv = json!({"type": "draw"});
    let p = assert_problem(
        play(&app, &tokens[waiting], &id, &mv, None).await,
        422,
        "not_your_turn",
    )
    .await;
    assert!(p["detail"].as_str().unwrap().contains("turn"));
    // A card the player does not hold: one from the other hand.
    let foreign = waiting_view["hand"][0].clone();
    let p = assert_problem(
        play(
            &app,
            &tokens[on_turn],
            &id,
            &json!({"type": "play", "card": foreign}),
            None,
        )
        .await,
        422,
        "card_not_in_hand",
    )
    .await;
    assert!(p["detail"]
        .as_str()
        .unwrap()
        .contains(foreign.as_str().unwrap()));
    // A card in hand that is not legal, when there is one.
    let legal = on_turn_view["legal_moves"].as_array().unwrap();
    let illegal = on_turn_view["hand"].as_array().unwrap().iter().find(|c| {
        !legal
            .iter()
            .any(|m| m["type"] == "play" && &m["card"] == *c)
    });
    if let Some(card) = illegal {
        let res = play(
            &app,
            &tokens[on_turn],
            &id,
            &json!({"type": "play", "card": card}),
            None,
        )
        .await;
        let p = res.json::<Value>().await.unwrap();
        assert_eq!(p["status"], 422, "{p}");
        assert!(
            ["illegal_move", "bad_choice", "bad_announce"].contains(&p["code"].as_str().unwrap()),
            "{p}"
        );
    }
    // Pass without drawing.
    let p = play(&app, &tokens[on_turn], &id, &json!({"type": "pass"}), None).await;
    assert_eq!(p.status(), 422);
    // A spectator.
    assert_problem(play(&app, &eve, &id, &mv, None).await, 403, "not_seated").await;
    // Stale versions, in the body or If-Match; a malformed If-Match.
    assert_problem(
        play(&app, &tokens[on_turn], &id, &mv, Some(version - 1)).await,
        409,
        "version_conflict",
    )
    .await;
    assert_problem(
        play(&app, &tokens[on_turn], &id, &mv, Some(-1)).await,
        409,
        "version_conflict",
    )
    .await;
    let with_if_match = |value: &str| {
        app.client
            .post(app.url(&format!("/v1/tables/{id}/moves")))
            .bearer_auth(&tokens[on_turn])
            .header("if-match", value.to_owned())
            .json(&json!({"move": mv}))
            .send()
    };
    assert_problem(
        with_if_match(&format!("\"{}\"", version + 3))
            .await
            .unwrap(),
        409,
        "version_conflict",
    )
    .await;
    assert_problem(with_if_match("seven").await.unwrap(), 400, "invalid_header").await;
    // Bodies that are not moves at all.
    let res = post(
        &app,
        &tokens[on_turn],
        &format!("/v1/tables/{id}/moves"),
        &json!({"mv": {}}),
    )
    .await;
    assert_problem(res, 422, "invalid_body").await;

    // Nothing was appended.
    let after = view(&app, &tokens[0], &id).await;
    assert_eq!(after["version"], version);
    assert_eq!(after["hand"], v0["hand"]);
    // The right version through If-Match works.
    let res = app
        .client
        .post(app.url(&format!("/v1/tables/{id}/moves")))
        .bearer_auth(&tokens[on_turn])
        .header("if-match", format!("\"{version}\""))
        .json(&json!({"move": on_turn_view["legal_moves"][0]}))
        .send()
        .await
        .unwrap();
    let answer = json_of(res, 200).await;
    assert!(answer["version"].as_i64().unwrap() > version);
}

#[tokio::test]
async fn idempotency_keys_replay_the_first_answer() {
    let app = spawn_app().await;
    let (id, tokens) = started_table(&app, "moderne", json!({}), 2).await;
    let v = view(&app, &tokens[0], &id).await;
    let on_turn = v["current_seat"].as_u64().unwrap() as usize;
    let token = &tokens[on_turn];
    let send = |body: Value, key: &str| {
        app.client
            .post(app.url(&format!("/v1/tables/{id}/moves")))
            .bearer_auth(token)
            .header("idempotency-key", key.to_owned())
            .json(&body)
            .send()
    };
    let mv = view(&app, token, &id).await["legal_moves"][0].clone();
    let body = json!({"move": mv, "expected_version": v["version"]});
    let first = json_of(send(body.clone(), "k-1").await.unwrap(), 200).await;
    let res = send(body.clone(), "k-1").await.unwrap();
    assert_eq!(res.headers()["idempotent-replayed"], "true");
    let replay = json_of(res, 200).await;
    assert_eq!(first, replay);
    // The move was made once.
    let now = view(&app, token, &id).await;
    assert_eq!(now["version"], first["version"]);
    // Another body with that key.
    let other = json!({"move": {"type": "pass"}, "expected_version": first["version"]});
    assert_problem(
        send(other, "k-1").await.unwrap(),
        422,
        "idempotency_key_reused",
    )
    .await;
    assert_problem(send(body, "").await.unwrap(), 400, "invalid_header").await;
}

#[tokio::test]
async fn event_feeds_are_redacted_per_caller_and_long_polls_wake_on_a_move() {
    let app = spawn_app().await;
    let (id, tokens) = started_table(&app, "classique", json!({}), 2).await;
    let eve = app.player_token("eve").await;
    let v = view(&app, &tokens[0], &id).await;
    let version = v["version"].as_i64().unwrap();

    for (who, token, seat) in [
        ("seat 0", &tokens[0], Some("0")),
        ("seat 1", &tokens[1], Some("1")),
        ("spectator", &eve, None),
    ] {
        let events = all_events(&app, token, &id).await;
        assert_eq!(events.len() as i64, version, "{who}");
        let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(
            types[..4],
            [
                "table_created",
                "player_joined",
                "player_joined",
                "game_started"
            ]
        );
        let deal = events
            .iter()
            .find(|e| e["type"] == "round_started")
            .unwrap();
        let hands = deal["data"]["hands"].as_object().unwrap();
        assert_eq!(
            hands.keys().map(String::as_str).collect::<Vec<_>>(),
            seat.into_iter().collect::<Vec<_>>(),
            "{who}"
        );
        assert!(deal["data"].get("stock").is_none());
        for e in &events {
            assert_eq!(e["hash"].as_str().unwrap().len(), 64);
        }
    }
    // The hashes are those of the full data: equal for every caller.
    let a = all_events(&app, &tokens[0], &id).await;
    let b = all_events(&app, &eve, &id).await;
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x["hash"], y["hash"]);
    }
    // after and limit.
    let page = json_of(
        get(
            &app,
            &eve,
            &format!("/v1/tables/{id}/events?after=1&limit=2"),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(e2e::seqs(page["events"].as_array().unwrap()), [2, 3]);
    assert_eq!(page["next"], 3);
    for q in ["wait=31", "after=-1", "limit=0", "limit=501", "wait=x"] {
        assert_problem(
            get(&app, &eve, &format!("/v1/tables/{id}/events?{q}")).await,
            400,
            "invalid_query",
        )
        .await;
    }

    // A long poll with nothing new ends empty at its deadline.
    let started = Instant::now();
    let page = json_of(
        get(
            &app,
            &eve,
            &format!("/v1/tables/{id}/events?after={version}&wait=1"),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(page["events"], json!([]));
    assert_eq!(page["next"], version);
    assert!(started.elapsed() >= Duration::from_millis(900));

    // A long poll answers as soon as a move is committed.
    let mut poll = {
        let client = app.client.clone();
        let url = app.url(&format!("/v1/tables/{id}/events?after={version}&wait=20"));
        let token = tokens[1].clone();
        tokio::spawn(async move {
            let started = Instant::now();
            let res = client.get(url).bearer_auth(token).send().await.unwrap();
            (res.json::<Value>().await.unwrap(), started.elapsed())
        })
    };
    // Nothing is new: the poll must not answer yet. (It subscribes before it
    // reads, so a move made before it waits is seen all the same.)
    assert!(
        tokio::time::timeout(Duration::from_millis(300), &mut poll)
            .await
            .is_err(),
        "the long poll answered with nothing new"
    );
    let on_turn = v["current_seat"].as_u64().unwrap() as usize;
    let on_turn_view = view(&app, &tokens[on_turn], &id).await;
    let mv = on_turn_view["legal_moves"][0].clone();
    json_of(
        play(&app, &tokens[on_turn], &id, &mv, Some(version)).await,
        200,
    )
    .await;
    let (page, took) = poll.await.unwrap();
    assert_eq!(page["events"][0]["seq"], version + 1, "{page}");
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[tokio::test]
async fn a_view_long_poll_answers_the_new_view_as_soon_as_a_move_is_committed() {
    let app = spawn_app().await;
    let (id, tokens) = started_table(&app, "classique", json!({}), 2).await;
    let v = view(&app, &tokens[0], &id).await;
    let version = v["version"].as_i64().unwrap();
    let etag = format!("\"{version}\"");
    let on_turn = v["current_seat"].as_u64().unwrap() as usize;
    let waiting = 1 - on_turn;

    for q in ["wait=31", "wait=x", "wait=-1"] {
        let res = app
            .client
            .get(app.url(&format!("/v1/tables/{id}/view?{q}")))
            .bearer_auth(&tokens[0])
            .header("if-none-match", &etag)
            .send()
            .await
            .unwrap();
        assert_problem(res, 400, "invalid_query").await;
    }

    // Nothing new: the 304 comes at the deadline, with the ETag.
    let started = Instant::now();
    let res = view_poll(&app, &id, &tokens[waiting], Some(&etag), 1).await;
    assert_eq!(res.status(), 304);
    assert_eq!(res.headers()["etag"].to_str().unwrap(), etag);
    assert!(started.elapsed() >= Duration::from_millis(900));

    // Without If-None-Match, or with an older ETag, there is nothing to
    // wait for: the view comes at once.
    for old in [None, Some(format!("\"{}\"", version - 1))] {
        let started = Instant::now();
        let res = view_poll(&app, &id, &tokens[waiting], old.as_deref(), 20).await;
        let got = json_of(res, 200).await;
        assert_eq!(got["version"], version);
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    // A waiting player's poll answers with its own new view once a move is
    // committed.
    let mut poll = tokio::spawn(view_poll(&app, &id, &tokens[waiting], Some(&etag), 20));
    assert!(
        tokio::time::timeout(Duration::from_millis(300), &mut poll)
            .await
            .is_err(),
        "the view long poll answered with nothing new"
    );
    let mv = view(&app, &tokens[on_turn], &id).await["legal_moves"][0].clone();
    let moved = json_of(
        play(&app, &tokens[on_turn], &id, &mv, Some(version)).await,
        200,
    )
    .await;
    let res = tokio::time::timeout(Duration::from_secs(10), poll)
        .await
        .expect("the view long poll answers after the move")
        .unwrap();
    let new_etag = res.headers()["etag"].to_str().unwrap().to_owned();
    let polled = json_of(res, 200).await;
    assert_eq!(polled["version"], moved["version"]);
    assert_eq!(new_etag, format!("\"{}\"", moved["version"]));
    // The waiting player's view, not the mover's.
    assert_eq!(polled["my_seat"], waiting);
    assert_eq!(polled, view(&app, &tokens[waiting], &id).await);
}
