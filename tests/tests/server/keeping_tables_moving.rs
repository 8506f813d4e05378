//! Tables that never stall (docs/RULES.md §7, docs/API.md "Keeping tables
//! moving"): a turn's clock and its timeout move (D37, D38), away seats and
//! coming back (D39), resigning (D40), aborting (D41), the server's moves
//! recorded as such (D42), and deadlines fired once by any process.

use std::time::Duration;

use crate::support::{
    all_events, audit, delete, get, json_of, play, post, post_empty, spawn_second_process, view,
};
use e2e::games::tamper;
use e2e::{assert_problem, eventually, spawn_app_with, TestApp};
use serde_json::{json, Value};

/// An app whose server plays at once and looks for due tables often.
async fn app() -> TestApp {
    spawn_app_with(|s| {
        s.bot_delay_ms = 0;
        s.due_poll_ms = 20;
    })
    .await
}

/// A started 2- or 3-player `classique` table with `clock` (tokens in seat
/// order).
async fn started(app: &TestApp, n: usize, clock: Value) -> (String, Vec<String>) {
    let mut tokens = Vec::new();
    for i in 0..n {
        let name = format!("k{i}_{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
        tokens.push(app.player_token(&name).await);
    }
    let body = json!({"ruleset": "classique", "seats": n, "clock": clock});
    let table = json_of(post(app, &tokens[0], "/v1/tables", &body).await, 201).await;
    // Nobody is on turn yet: no deadline.
    let mut shown = clock.clone();
    if let Some(c) = shown.as_object_mut() {
        c.insert("deadline".into(), Value::Null);
    }
    assert_eq!(table["clock"], shown);
    let id = table["id"].as_str().unwrap().to_owned();
    for t in &tokens[1..] {
        json_of(
            post_empty(app, t, &format!("/v1/tables/{id}/players")).await,
            200,
        )
        .await;
    }
    json_of(
        post_empty(app, &tokens[0], &format!("/v1/tables/{id}/start")).await,
        200,
    )
    .await;
    (id, tokens)
}

/// The seat on turn plays its first legal move itself (none: nobody).
async fn own_move(app: &TestApp, id: &str, tokens: &[String]) -> Option<usize> {
    for (seat, token) in tokens.iter().enumerate() {
        let v = view(app, token, id).await;
        if v["status"] != "playing" || v["current_seat"] != json!(seat) {
            continue;
        }
        let mv = v["legal_moves"][0].clone();
        let res = play(app, token, id, &mv, Some(v["version"].as_i64().unwrap())).await;
        // The server may have moved first (a bot seat): not this seat's turn then.
        if res.status() == 200 {
            return Some(seat);
        }
    }
    None
}

/// An event's data without its salt (every event has one, docs/API.md).
fn data(event: &Value) -> Value {
    let mut data = event["data"].clone();
    data.as_object_mut().unwrap().remove("salt");
    data
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn d37_a_clock_out_of_range_or_of_the_wrong_type_is_refused() {
    let app = app().await;
    let token = app.player_token("clocked").await;
    for clock in [
        json!({"turn_seconds": 4}),
        json!({"turn_seconds": 30, "away_after": 11}),
    ] {
        let body = json!({"ruleset": "classique", "seats": 2, "clock": clock});
        assert_problem(
            post(&app, &token, "/v1/tables", &body).await,
            422,
            "invalid_clock",
        )
        .await;
    }
    for clock in [
        json!({"turn_seconds": "30"}),
        json!({"turn_seconds": 30, "speed": 2}),
        json!(12),
    ] {
        let body = json!({"ruleset": "classique", "seats": 2, "clock": clock});
        assert_problem(
            post(&app, &token, "/v1/tables", &body).await,
            422,
            "invalid_body",
        )
        .await;
    }
    let body = json!({"ruleset": "classique", "seats": 2});
    let table = json_of(post(&app, &token, "/v1/tables", &body).await, 201).await;
    assert_eq!(table["clock"], Value::Null);
}

#[tokio::test]
async fn d38_d39_a_seat_whose_clock_runs_out_times_out_goes_away_and_comes_back() {
    let app = app().await;
    // A second process fires deadlines too: each one still fires once.
    let _other = spawn_second_process(&app).await;
    let (id, tokens) = started(&app, 2, json!({"turn_seconds": 5, "away_after": 1})).await;
    let first = view(&app, &tokens[0], &id).await["current_seat"]
        .as_u64()
        .unwrap() as usize;
    // The seat on turn sees its deadline, 5 s after its turn started; the
    // other seat does not; the summary shows it to everyone.
    let on_turn = view(&app, &tokens[first], &id).await;
    let deadline = on_turn["deadline"].as_str().expect("a deadline").to_owned();
    assert_eq!(on_turn["clock"]["deadline"], json!(deadline));
    assert_eq!(
        view(&app, &tokens[1 - first], &id).await["deadline"],
        Value::Null
    );
    let summary = json_of(
        get(&app, &tokens[0], &format!("/v1/tables/{id}")).await,
        200,
    )
    .await;
    assert_eq!(summary["clock"]["deadline"], json!(deadline));
    let started_at = all_events(&app, &tokens[0], &id)
        .await
        .iter()
        .rev()
        .find(|e| e["type"] == "turn_started")
        .map(|e| {
            e["at"]
                .as_str()
                .unwrap()
                .parse::<chrono::DateTime<chrono::Utc>>()
                .unwrap()
        })
        .unwrap();
    let deadline: chrono::DateTime<chrono::Utc> = deadline.parse().unwrap();
    assert_eq!(deadline - started_at, chrono::Duration::seconds(5));
    // Nobody moves: after 5 s the seat on turn times out, and is away.
    let away = eventually(Duration::from_secs(15), || async {
        let events = all_events(&app, &tokens[0], &id).await;
        types(&events).contains(&"seat_away").then_some(events)
    })
    .await
    .expect("the seat on turn timed out and went away");
    let kinds = types(&away);
    let timed_out = kinds.iter().position(|k| *k == "turn_timed_out").unwrap();
    assert_eq!(away[timed_out]["data"]["seat"], json!(first));
    let timed_out_at: chrono::DateTime<chrono::Utc> = away[timed_out]["data"]["deadline"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(timed_out_at, deadline, "the deadline that passed");
    assert_eq!(
        kinds.iter().filter(|k| **k == "turn_timed_out").count(),
        1,
        "one timeout for one deadline: {kinds:?}"
    );
    // What follows the timeout is the timeout move: a draw or a pass.
    assert!(
        matches!(kinds[timed_out + 1], "cards_drawn" | "turn_passed"),
        "{kinds:?}"
    );
    assert!(kinds.contains(&"seat_away"));
    let summary = json_of(
        get(&app, &tokens[0], &format!("/v1/tables/{id}")).await,
        200,
    )
    .await;
    assert_eq!(summary["players"][first]["away"], true);
    // An away player's own move is refused until they come back.
    let mv = json!({"type": "draw"});
    assert_problem(
        play(&app, &tokens[first], &id, &mv, None).await,
        409,
        "seat_away",
    )
    .await;
    // Its next turn is the server's, at once, recorded as such.
    eventually(Duration::from_secs(30), || async {
        own_move(&app, &id, &tokens).await;
        let events = all_events(&app, &tokens[0], &id).await;
        types(&events).contains(&"bot_moved").then_some(())
    })
    .await
    .expect("the server plays the away seat");
    let events = all_events(&app, &tokens[0], &id).await;
    let bot = events
        .iter()
        .find(|e| e["type"] == "bot_moved")
        .expect("a bot move");
    assert_eq!(bot["data"]["seat"], json!(first));
    assert_eq!(bot["data"]["reason"], "away");
    assert_eq!(bot["data"]["bot"], "basic@1");
    // Its player comes back.
    let back = format!("/v1/tables/{id}/seats/me/back");
    let v = json_of(post_empty(&app, &tokens[first], &back).await, 200).await;
    assert_eq!(v["players"][first]["away"], false);
    assert_problem(
        post_empty(&app, &tokens[first], &back).await,
        409,
        "not_away",
    )
    .await;
    let events = all_events(&app, &tokens[0], &id).await;
    let last = events.last().unwrap();
    assert_eq!(
        (&last["type"], data(last)),
        (&json!("seat_back"), json!({"seat": first}))
    );
    // The audit finds every timeout after its deadline and every move the
    // server made the one it had to make.
    let report = audit(&app, &id).await;
    assert_eq!(report["ok"], true, "{report:#}");
}

#[tokio::test]
async fn d40_a_resigned_seat_is_played_by_the_server_and_the_last_resignation_ends_the_game() {
    let app = app().await;
    let (id, tokens) = started(&app, 3, Value::Null).await;
    let resign = format!("/v1/tables/{id}/resign");
    let v = json_of(post_empty(&app, &tokens[1], &resign).await, 200).await;
    assert_eq!(v["players"][1]["resigned"], true);
    assert_problem(
        post_empty(&app, &tokens[1], &resign).await,
        409,
        "already_resigned",
    )
    .await;
    // Seat 1's turns are the server's.
    eventually(Duration::from_secs(30), || async {
        own_move(&app, &id, &tokens).await;
        let events = all_events(&app, &tokens[0], &id).await;
        events
            .iter()
            .any(|e| e["type"] == "bot_moved" && e["data"]["reason"] == "resigned")
            .then_some(())
    })
    .await
    .expect("the server plays the resigned seat");
    let events = all_events(&app, &tokens[0], &id).await;
    let resigned = events.iter().find(|e| e["type"] == "player_resigned");
    assert_eq!(data(resigned.unwrap()), json!({"seat": 1}));
    // Seat 2 resigns: one seat is left, the game ends.
    let v = json_of(post_empty(&app, &tokens[2], &resign).await, 200).await;
    assert_eq!(v["status"], "finished");
    assert_eq!(v["result"]["reason"], "resigned");
    assert_eq!(v["result"]["winners"], json!([0]));
    let order: Vec<&Value> = v["result"]["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["seat"])
        .collect();
    assert_eq!(order, vec![&json!(0), &json!(2), &json!(1)]);
    let report = audit(&app, &id).await;
    assert_eq!(report["ok"], true, "{report:#}");
    // A forger who says the server played that seat for another reason, and
    // keeps the hash chain valid, is caught at that event.
    let table: uuid::Uuid = id.parse().unwrap();
    let seq = tamper::seq_of(&app.pool, table, "bot_moved", 0).await;
    tamper::allow_changes(&app.pool).await;
    tamper::edit_data(&app.pool, table, seq, "reason", json!("away")).await;
    tamper::rechain(&app.pool, table, seq).await;
    let report = audit(&app, &id).await;
    assert_eq!(report["ok"], false);
    assert_eq!(report["first_bad_seq"], json!(seq), "{report:#}");
}

#[tokio::test]
async fn d41_a_game_may_be_aborted_until_every_player_has_moved() {
    let app = app().await;
    let (id, tokens) = started(&app, 2, Value::Null).await;
    own_move(&app, &id, &tokens).await.expect("one move");
    let abort = format!("/v1/tables/{id}/abort");
    let summary = json_of(post_empty(&app, &tokens[1], &abort).await, 200).await;
    assert_eq!(summary["status"], "aborted");
    assert_problem(
        post_empty(&app, &tokens[0], &abort).await,
        409,
        "game_aborted",
    )
    .await;
    let v = view(&app, &tokens[0], &id).await;
    assert_eq!(v["status"], "aborted");
    let mv = json!({"type": "draw"});
    assert_problem(
        play(&app, &tokens[0], &id, &mv, None).await,
        409,
        "game_aborted",
    )
    .await;
    let listed = json_of(
        get(&app, &tokens[0], "/v1/tables?status=aborted").await,
        200,
    )
    .await;
    assert!(listed["tables"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["id"] == json!(id)));

    let (id, tokens) = started(&app, 2, Value::Null).await;
    let mut moved = [false; 2];
    while moved.contains(&false) {
        moved[own_move(&app, &id, &tokens).await.expect("a move")] = true;
    }
    let abort = format!("/v1/tables/{id}/abort");
    assert_problem(
        post_empty(&app, &tokens[0], &abort).await,
        409,
        "abort_too_late",
    )
    .await;
}

#[tokio::test]
async fn d42_bots_hold_seats_from_the_start_and_play_the_game_out() {
    let app = app().await;
    let me = app.player_token("with_bots").await;
    let other = app.player_token("not_creator").await;
    for level in ["genius", "Basic", ""] {
        let body = json!({"ruleset": "classique", "seats": 3, "bots": [{"level": level}]});
        assert_problem(
            post(&app, &me, "/v1/tables", &body).await,
            422,
            "invalid_bot",
        )
        .await;
    }
    // As many bots as seats is a request that cannot be met (422), not a
    // table that filled up (409 `table_full`).
    let too_many = json!({"ruleset": "classique", "seats": 2, "bots": [{"level": "basic"}, {"level": "basic"}]});
    assert_problem(
        post(&app, &me, "/v1/tables", &too_many).await,
        422,
        "invalid_bot",
    )
    .await;
    let body = json!({
        "ruleset": "classique", "seats": 3, "options": {"rounds": 1},
        "bots": [{"level": "random"}]
    });
    let table = json_of(post(&app, &me, "/v1/tables", &body).await, 201).await;
    let id = table["id"].as_str().unwrap().to_owned();
    assert_eq!(table["players"][1]["bot"], "random");
    assert_eq!(table["players"][1]["account_id"], Value::Null);
    assert_eq!(table["players"][0]["bot"], Value::Null);
    let bots = format!("/v1/tables/{id}/bots");
    assert_problem(
        post(&app, &other, &bots, &json!({"level": "basic"})).await,
        403,
        "not_creator",
    )
    .await;
    let summary = json_of(
        post(&app, &me, &bots, &json!({"level": "basic"})).await,
        200,
    )
    .await;
    assert_eq!(summary["players"][2]["bot"], "basic");
    json_of(
        post_empty(&app, &me, &format!("/v1/tables/{id}/start")).await,
        200,
    )
    .await;
    // Only the person plays by hand; the bots play when it is their turn.
    let tokens = vec![me.clone()];
    let finished = eventually(Duration::from_secs(60), || async {
        own_move(&app, &id, &tokens).await;
        let v = view(&app, &me, &id).await;
        (v["status"] == "finished").then_some(v)
    })
    .await
    .expect("the game ends");
    assert!(finished["result"]["ranking"].is_array());
    let events = all_events(&app, &me, &id).await;
    let by_level = |tag: &str| {
        events
            .iter()
            .filter(|e| e["type"] == "bot_moved" && e["data"]["bot"] == tag)
            .count()
    };
    assert!(by_level("random@1") > 0 && by_level("basic@1") > 0);
    let mut seated: Vec<Value> = events
        .iter()
        .filter(|e| e["type"] == "bot_seated")
        .map(data)
        .collect();
    // Each bot's seat has the seed the server drew for it (docs/API.md
    // "Fair deals").
    for bot in &mut seated {
        let seed = bot.as_object_mut().unwrap().remove("client_seed").unwrap();
        assert_eq!(seed.as_str().unwrap().len(), 32, "{seed}");
    }
    assert_eq!(
        seated,
        vec![
            json!({"seat": 1, "level": "random"}),
            json!({"seat": 2, "level": "basic"})
        ]
    );
    // One representation of a bot's seat: no account, in the log as in the
    // summary.
    let started = events.iter().find(|e| e["type"] == "game_started").unwrap();
    for p in started["data"]["players"].as_array().unwrap() {
        assert_eq!(p["account_id"].is_null(), p["bot"].is_string(), "{p}");
    }
    // A bot's seed is hidden from the other seats like a card (it would
    // tell the bot's choices from its hand); the log of the game shows it.
    assert!(events
        .iter()
        .filter(|e| e["type"] == "bot_moved")
        .all(|e| e["data"].get("seed").is_none() && e["data"].get("salt").is_none()));
    let log = get(&app, &me, &format!("/v1/tables/{id}/log")).await;
    let log = log.text().await.unwrap();
    let moved: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "bot_moved")
        .collect();
    assert!(!moved.is_empty() && moved.iter().all(|e| e["data"]["seed"].is_u64()));
    assert!(events
        .iter()
        .filter(|e| e["type"] == "bot_moved")
        .all(|e| e["data"]["reason"] == "bot"));
    let report = audit(&app, &id).await;
    assert_eq!(report["ok"], true, "{report:#}");
}

#[tokio::test]
async fn d42_a_person_plays_a_whole_game_against_three_bots_of_each_level_in_every_preset() {
    let app = app().await;
    let me = app.player_token("among_bots").await;
    let tokens = vec![me.clone()];
    let rulesets = json_of(get(&app, &me, "/v1/rulesets").await, 200).await;
    for ruleset in rulesets.as_array().unwrap() {
        let ruleset = ruleset["id"].as_str().unwrap();
        for level in ["random", "basic", "strong"] {
            let body = json!({
                "ruleset": ruleset, "seats": 4, "options": {"rounds": 1},
                "bots": [{"level": level}, {"level": level}, {"level": level}]
            });
            let table = json_of(post(&app, &me, "/v1/tables", &body).await, 201).await;
            let id = table["id"].as_str().unwrap().to_owned();
            json_of(
                post_empty(&app, &me, &format!("/v1/tables/{id}/start")).await,
                200,
            )
            .await;
            let finished = eventually(Duration::from_secs(120), || async {
                own_move(&app, &id, &tokens).await;
                let v = view(&app, &me, &id).await;
                (v["status"] == "finished").then_some(v)
            })
            .await
            .unwrap_or_else(|| panic!("{ruleset} against {level} bots: the game ends"));
            assert_eq!(finished["result"]["ranking"].as_array().unwrap().len(), 4);
            let events = all_events(&app, &me, &id).await;
            let tag = format!("{level}@1");
            assert!(
                events
                    .iter()
                    .any(|e| e["type"] == "bot_moved" && e["data"]["bot"] == json!(tag)),
                "{ruleset}: {tag} moved"
            );
        }
    }
}

#[tokio::test]
async fn d39_d41_the_players_commands_are_refused_out_of_their_time_and_to_outsiders() {
    let app = app().await;
    let (a, b, outsider) = (
        app.player_token("refused_a").await,
        app.player_token("refused_b").await,
        app.player_token("refused_c").await,
    );
    let body = json!({"ruleset": "classique", "seats": 2});
    let table = json_of(post(&app, &a, "/v1/tables", &body).await, 201).await;
    let id = table["id"].as_str().unwrap().to_owned();
    let at = |command: &str| format!("/v1/tables/{id}/{command}");
    // Each of the three commands, by `token`, is refused with `status` and
    // `code`.
    let all_refused = |token: String, status: u16, code: &'static str| {
        let (app, at) = (&app, &at);
        async move {
            for command in ["resign", "abort", "seats/me/back"] {
                assert_problem(post_empty(app, &token, &at(command)).await, status, code).await;
            }
        }
    };
    // Before the game: nothing to resign, abort or come back to.
    all_refused(a.clone(), 409, "game_not_started").await;
    json_of(post_empty(&app, &b, &at("players")).await, 200).await;
    json_of(post_empty(&app, &a, &at("start")).await, 200).await;
    // Only the seated may; a bot cannot sit once the game runs.
    all_refused(outsider, 403, "not_seated").await;
    assert_problem(
        post(&app, &a, &at("bots"), &json!({"level": "basic"})).await,
        409,
        "table_not_waiting",
    )
    .await;
    assert_problem(
        post_empty(&app, &a, &at("seats/me/back")).await,
        409,
        "not_away",
    )
    .await;
    // One of two resigns: the game is over, for every command.
    let v = json_of(post_empty(&app, &b, &at("resign")).await, 200).await;
    assert_eq!(v["status"], "finished");
    assert_eq!(v["result"]["reason"], "resigned");
    all_refused(a, 409, "game_over").await;
}

/// Opens a `classique` table of `seats` with `bots` (levels) for `token`;
/// the answer as is.
async fn open_with_bots(
    app: &TestApp,
    token: &str,
    seats: usize,
    bots: &[&str],
) -> reqwest::Response {
    let bots: Vec<Value> = bots.iter().map(|l| json!({"level": l})).collect();
    let body = json!({"ruleset": "classique", "seats": seats, "bots": bots});
    post(app, token, "/v1/tables", &body).await
}

/// The id of a table just opened.
async fn opened(res: reqwest::Response) -> String {
    json_of(res, 201).await["id"].as_str().unwrap().to_owned()
}

async fn start(app: &TestApp, token: &str, id: &str) -> reqwest::Response {
    post_empty(app, token, &format!("/v1/tables/{id}/start")).await
}

#[tokio::test]
async fn bots_alone_never_play_a_game_start_needs_a_person_and_the_last_person_resigning_ends_it() {
    let app = app().await;
    let me = app.player_token("walks_away").await;
    // The creator leaves a table of strong bots: it cannot start.
    let id = opened(open_with_bots(&app, &me, 3, &["strong", "strong"]).await).await;
    json_of(
        delete(&app, &me, &format!("/v1/tables/{id}/players/me")).await,
        200,
    )
    .await;
    assert_problem(start(&app, &me, &id).await, 409, "no_person_seated").await;
    // With a person seated, it starts; once the last person resigns, the
    // game ends (D40) instead of the server playing bots against bots.
    let id = opened(open_with_bots(&app, &me, 3, &["basic", "basic"]).await).await;
    json_of(start(&app, &me, &id).await, 200).await;
    let v = json_of(
        post_empty(&app, &me, &format!("/v1/tables/{id}/resign")).await,
        200,
    )
    .await;
    assert_eq!(v["status"], "finished");
    assert_eq!(v["result"]["reason"], "resigned");
}

/// How many tables wait, as `token` lists them.
async fn waiting_tables(app: &TestApp, token: &str) -> usize {
    let listed = json_of(get(app, token, "/v1/tables?status=waiting").await, 200).await;
    listed["tables"].as_array().unwrap().len()
}

#[tokio::test]
async fn an_account_runs_at_most_8_bots_and_4_tables_with_a_strong_bot_429_too_many_bots() {
    let app = app().await;
    let me = app.player_token("bot_flood").await;
    let before = waiting_tables(&app, &me).await;
    // 17 strong bots at one table: refused at once, nothing opened.
    let strong: Vec<Value> = (0..17).map(|_| json!({"level": "strong"})).collect();
    let body = json!({"ruleset": "757", "seats": 18, "bots": strong});
    assert_problem(
        post(&app, &me, "/v1/tables", &body).await,
        429,
        "too_many_bots",
    )
    .await;
    assert_eq!(waiting_tables(&app, &me).await, before, "nothing opened");
    let basic: Vec<Value> = (0..7).map(|_| json!({"level": "basic"})).collect();
    let body = json!({"ruleset": "classique", "seats": 8, "bots": basic});
    // Seven bots at one running table, then two more anywhere: refused.
    let id = opened(post(&app, &me, "/v1/tables", &body).await).await;
    json_of(start(&app, &me, &id).await, 200).await;
    let res = open_with_bots(&app, &me, 3, &["basic", "basic"]).await;
    let retry = res.headers()["retry-after"].to_str().unwrap().to_owned();
    assert!(retry.parse::<u64>().unwrap() >= 1, "{retry}");
    assert_problem(res, 429, "too_many_bots").await;
    // One more is fine; a second one through POST …/bots is not.
    let id = opened(open_with_bots(&app, &me, 3, &["random"]).await).await;
    assert_problem(
        post(
            &app,
            &me,
            &format!("/v1/tables/{id}/bots"),
            &json!({"level": "random"}),
        )
        .await,
        429,
        "too_many_bots",
    )
    .await;

    // Tables with a strong bot: four run, a fifth does not start.
    let other = app.player_token("strong_flood").await;
    let mut waiting = Vec::new();
    for _ in 0..5 {
        waiting.push(opened(open_with_bots(&app, &other, 2, &["strong"]).await).await);
    }
    for id in &waiting[..4] {
        json_of(start(&app, &other, id).await, 200).await;
    }
    assert_problem(start(&app, &other, &waiting[4]).await, 429, "too_many_bots").await;
    let v = view(&app, &other, &waiting[4]).await;
    assert_eq!(v["status"], "waiting", "refused, still waiting");
    // Once one of them is over, the fifth starts.
    json_of(
        post_empty(&app, &other, &format!("/v1/tables/{}/resign", waiting[0])).await,
        200,
    )
    .await;
    json_of(start(&app, &other, &waiting[4]).await, 200).await;
}

/// Makes the table's deadline due now (the clock's seconds are not what
/// the test is about).
async fn due_now(app: &TestApp, id: &str) {
    let id: uuid::Uuid = id.parse().unwrap();
    sqlx::query("UPDATE game_tables SET due_at = now() WHERE id = $1 AND due_at IS NOT NULL")
        .bind(id)
        .execute(&app.pool)
        .await
        .unwrap();
}

#[tokio::test]
async fn d41_a_player_who_never_moves_cannot_keep_abort_open_nor_one_who_resigned() {
    let app = app().await;
    let (id, tokens) = started(&app, 2, json!({"turn_seconds": 3600, "away_after": 10})).await;
    let abort = format!("/v1/tables/{id}/abort");
    // Nobody moves: each seat times out once, in turn.
    let all = eventually(Duration::from_secs(20), || async {
        due_now(&app, &id).await;
        let events = all_events(&app, &tokens[0], &id).await;
        let timed_out: std::collections::HashSet<u64> = events
            .iter()
            .filter(|e| e["type"] == "turn_timed_out")
            .map(|e| e["data"]["seat"].as_u64().unwrap())
            .collect();
        (timed_out.len() == 2).then_some(())
    })
    .await;
    assert!(all.is_some(), "both seats timed out");
    for token in &tokens {
        assert_problem(post_empty(&app, token, &abort).await, 409, "abort_too_late").await;
    }

    let (id, tokens) = started(&app, 3, json!(null)).await;
    json_of(
        post_empty(&app, &tokens[2], &format!("/v1/tables/{id}/resign")).await,
        200,
    )
    .await;
    let abort = format!("/v1/tables/{id}/abort");
    assert_problem(
        post_empty(&app, &tokens[2], &abort).await,
        409,
        "already_resigned",
    )
    .await;
    json_of(post_empty(&app, &tokens[0], &abort).await, 200).await;
}

#[tokio::test]
async fn d42_a_bots_seed_is_hidden_from_the_other_seats_while_its_round_runs() {
    let app = app().await;
    let me = app.player_token("reads_seeds").await;
    let id = opened(open_with_bots(&app, &me, 2, &["random"]).await).await;
    json_of(start(&app, &me, &id).await, 200).await;
    let tokens = vec![me.clone()];
    let moved = eventually(Duration::from_secs(20), || async {
        own_move(&app, &id, &tokens).await;
        let events = all_events(&app, &me, &id).await;
        let moved: Vec<Value> = events
            .into_iter()
            .filter(|e| e["type"] == "bot_moved")
            .collect();
        (!moved.is_empty()).then_some(moved)
    })
    .await
    .expect("the bot moved");
    for e in &moved {
        assert_eq!(e["data"].get("seed"), None, "{e}");
        assert_eq!(
            e["data"].get("salt"),
            None,
            "no salt: the hash tells nothing"
        );
        assert_eq!(e["data"]["bot"], "random@1");
    }
    // An admin's replay of the running round shows it.
    let report = audit(&app, &id).await;
    assert_eq!(report["ok"], true, "{report:#}");
}

/// What a game cut short leaves (docs/API.md "A result that is over stays
/// over"): every view and summary with nobody on turn and no deadline, its
/// round listed as cut short (nothing scored), replayed, disputed and in
/// the audit, and the log released to the players.
async fn assert_over_and_cut_short(app: &TestApp, id: &str, tokens: &[String]) {
    for token in tokens {
        let v = view(app, token, id).await;
        assert!(v["current_seat"].is_null(), "{v:#}");
        assert!(v["deadline"].is_null(), "{v:#}");
        assert!(v["clock"]["deadline"].is_null(), "{v:#}");
        assert_eq!(v["legal_moves"], json!([]));
        assert_eq!(v["pending"]["kind"], "none");
    }
    let summary = json_of(get(app, &tokens[0], &format!("/v1/tables/{id}")).await, 200).await;
    assert!(summary["clock"]["deadline"].is_null(), "{summary:#}");
    let rounds = json_of(
        get(app, &tokens[0], &format!("/v1/tables/{id}/rounds")).await,
        200,
    )
    .await;
    let round = &rounds["rounds"][0];
    assert_eq!(round["round"], 1, "{rounds:#}");
    assert_eq!(round["cut_short"], true);
    assert_eq!(round["points"], json!(vec![0; tokens.len()]));
    assert_eq!(round["totals"], json!(vec![0; tokens.len()]));
    let replay = json_of(
        get(app, &tokens[0], &format!("/v1/tables/{id}/rounds/1/replay")).await,
        200,
    )
    .await;
    let last = replay["last_step"].as_u64().unwrap();
    let end = replay["events"][last as usize]["type"].clone();
    assert!(end == "game_ended" || end == "game_aborted", "{end}");
    let dispute = json!({"round": 1, "reason": "the round was cut short"});
    let at = format!("/v1/tables/{id}/disputes");
    json_of(post(app, &tokens[0], &at, &dispute).await, 201).await;
    let log = get(app, &tokens[1], &format!("/v1/tables/{id}/log")).await;
    assert_eq!(log.status(), 200);
    let report = audit(app, id).await;
    assert_eq!(report["ok"], true, "{report:#}");
    assert_eq!(report["rounds"][0]["cut_short"], true, "{report:#}");
    assert_eq!(report["rounds"][0]["matches"], true, "{report:#}");
}

#[tokio::test]
async fn d40_a_game_ended_by_resigning_is_over_in_every_view_and_its_round_is_a_round() {
    let app = app().await;
    let (id, tokens) = started(&app, 2, json!({"turn_seconds": 60, "away_after": 2})).await;
    let v = json_of(
        post_empty(&app, &tokens[1], &format!("/v1/tables/{id}/resign")).await,
        200,
    )
    .await;
    assert_eq!(v["status"], "finished");
    assert!(v["current_seat"].is_null(), "the answer too: {v:#}");
    assert_over_and_cut_short(&app, &id, &tokens).await;
}

#[tokio::test]
async fn d41_an_aborted_game_is_over_in_every_view_its_round_is_a_round_and_its_log_is_released() {
    let app = app().await;
    let (id, tokens) = started(&app, 2, json!({"turn_seconds": 60, "away_after": 2})).await;
    let summary = json_of(
        post_empty(&app, &tokens[0], &format!("/v1/tables/{id}/abort")).await,
        200,
    )
    .await;
    assert_eq!(summary["status"], "aborted");
    assert!(summary["clock"]["deadline"].is_null(), "{summary:#}");
    assert_over_and_cut_short(&app, &id, &tokens).await;
}

/// `answer` (a command's) is what a read of its version shows the caller:
/// the view (a move's `view`), or the table's summary.
async fn answers_as_read(app: &TestApp, token: &str, id: &str, answer: &Value, what: &str) {
    let (answered, path) = match answer.get("view") {
        Some(view) => (view, format!("/v1/tables/{id}/view")),
        None if answer.get("my_seat").is_some() => (answer, format!("/v1/tables/{id}/view")),
        None => (answer, format!("/v1/tables/{id}")),
    };
    let read = json_of(get(app, token, &path).await, 200).await;
    assert_eq!(
        read["version"], answered["version"],
        "{what}: read at another version"
    );
    assert_eq!(
        &read, answered,
        "{what}: the answer differs from a read of its version"
    );
}

#[tokio::test]
async fn every_commands_answer_is_what_a_read_of_its_version_shows() {
    // The server's own moves wait 3 s: reads right after an answer meet
    // the same version.
    let app = spawn_app_with(|s| {
        s.bot_delay_ms = 3000;
        s.due_poll_ms = 20;
    })
    .await;
    let names: Vec<String> = (0..3)
        .map(|i| format!("r{i}_{}", &uuid::Uuid::new_v4().simple().to_string()[..8]))
        .collect();
    let mut tokens = Vec::new();
    for name in &names {
        tokens.push(app.player_token(name).await);
    }
    let clock = json!({"turn_seconds": 5, "away_after": 1});
    let body = json!({"ruleset": "classique", "seats": 4, "clock": clock});
    let created = json_of(post(&app, &tokens[0], "/v1/tables", &body).await, 201).await;
    let id = created["id"].as_str().unwrap().to_owned();
    answers_as_read(&app, &tokens[0], &id, &created, "create").await;
    let at = |path: &str| format!("/v1/tables/{id}/{path}");
    for (token, what) in [(&tokens[1], "join"), (&tokens[2], "join")] {
        let answer = json_of(post_empty(&app, token, &at("players")).await, 200).await;
        answers_as_read(&app, token, &id, &answer, what).await;
    }
    let left = json_of(delete(&app, &tokens[2], &at("players/me")).await, 200).await;
    answers_as_read(&app, &tokens[2], &id, &left, "leave").await;
    let bot = json!({"level": "basic"});
    let seated = json_of(post(&app, &tokens[0], &at("bots"), &bot).await, 200).await;
    answers_as_read(&app, &tokens[0], &id, &seated, "bot").await;
    let started = json_of(post_empty(&app, &tokens[0], &at("start")).await, 200).await;
    answers_as_read(&app, &tokens[0], &id, &started, "start").await;
    // A person's move: the bot, when it is first, moves after its delay.
    let moved = eventually(Duration::from_secs(20), || async {
        for (seat, token) in tokens[..2].iter().enumerate() {
            let v = view(&app, token, &id).await;
            if v["current_seat"] == json!(seat) {
                let mv = v["legal_moves"][0].clone();
                let answer = json_of(
                    play(&app, token, &id, &mv, v["version"].as_i64()).await,
                    200,
                )
                .await;
                answers_as_read(&app, token, &id, &answer, "move").await;
                return Some(seat);
            }
        }
        None
    })
    .await;
    assert!(moved.is_some(), "a person moved");
    // Nobody moves: the seat on turn times out and goes away (away_after
    // 1). It comes back on its next turn, within the bot delay: its
    // deadline is then a new turn's, not the server's move's.
    let away = eventually(Duration::from_secs(40), || async {
        let events = all_events(&app, &tokens[0], &id).await;
        events
            .iter()
            .find(|e| e["type"] == "seat_away")
            .map(|e| e["data"]["seat"].as_u64().unwrap() as usize)
    })
    .await
    .expect("a seat timed out and went away");
    assert!(away < 2, "a person's seat goes away, not the bot's");
    eventually(Duration::from_secs(40), || async {
        let v = view(&app, &tokens[away], &id).await;
        (v["current_seat"] == json!(away)).then_some(())
    })
    .await
    .expect("the away seat's turn comes again");
    let back = json_of(
        post_empty(&app, &tokens[away], &at("seats/me/back")).await,
        200,
    )
    .await;
    answers_as_read(&app, &tokens[away], &id, &back, "come back").await;
    let resigned = json_of(post_empty(&app, &tokens[away], &at("resign")).await, 200).await;
    answers_as_read(&app, &tokens[away], &id, &resigned, "resign").await;

    // An abort, on a table of its own.
    let (id, tokens) = started_table_of_two(&app).await;
    let aborted = json_of(
        post_empty(&app, &tokens[0], &format!("/v1/tables/{id}/abort")).await,
        200,
    )
    .await;
    answers_as_read(&app, &tokens[0], &id, &aborted, "abort").await;
}

/// A started 2-player `classique` table with a clock, on `app`.
async fn started_table_of_two(app: &TestApp) -> (String, Vec<String>) {
    started(app, 2, json!({"turn_seconds": 60, "away_after": 2})).await
}

/// Deadlines falling due together are fired together: a timeout changes
/// no projection, so its append joins the log writer's shared statement
/// with the others' (a transaction of its own each, holding its players'
/// feed locks, made 1,000 of them late by seconds: BENCHMARKS.md,
/// twenty-seventh pass). Each still fires once.
#[tokio::test]
async fn deadlines_due_together_are_appended_together_each_once() {
    let app = spawn_app_with(|s| {
        s.due_poll_ms = 20;
        s.tables_per_minute = 0;
    })
    .await;
    let a = app.player_token("together_a").await;
    let b = app.player_token("together_b").await;
    let body = json!({"ruleset": "classique", "seats": 2,
                      "clock": {"turn_seconds": 3600, "away_after": 10}});
    let mut tables = Vec::new();
    for _ in 0..12 {
        let table = json_of(post(&app, &a, "/v1/tables", &body).await, 201).await;
        let id = table["id"].as_str().unwrap().to_owned();
        let joined = post_empty(&app, &b, &format!("/v1/tables/{id}/players")).await;
        json_of(joined, 200).await;
        json_of(start(&app, &a, &id).await, 200).await;
        tables.push(id.parse::<uuid::Uuid>().unwrap());
    }
    sqlx::query("UPDATE game_tables SET due_at = now() WHERE id = ANY($1)")
        .bind(&tables)
        .execute(&app.pool)
        .await
        .unwrap();
    let timed_out = || async {
        sqlx::query_as::<_, (i64, i64)>(
            "SELECT count(*), count(DISTINCT xmin::text) FROM events
             WHERE table_id = ANY($1) AND type = 'turn_timed_out'",
        )
        .bind(&tables)
        .fetch_one(&app.pool)
        .await
        .unwrap()
    };
    let (fired, transactions) = eventually(Duration::from_secs(10), || async {
        let (fired, transactions) = timed_out().await;
        (fired == 12).then_some((fired, transactions))
    })
    .await
    .expect("every table timed out");
    assert!(
        transactions < fired,
        "{fired} timeouts written by {transactions} transactions"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(timed_out().await.0, 12, "each fired once");
}
