//! Fair deals (docs/API.md "Fair deals"): a table commits to its server
//! seed when it opens, every seat brings a seed of its own, the seed is
//! revealed once the game is over and never before, and the log then
//! proves every deal, offline too.

use sha2::{Digest, Sha256};

use crate::support::{
    admin_token, all_events, delete, each_moves, every_read, get, json_of, players, post,
    post_empty, view,
};
use domain::{Event, ServerSeed, TableEvent};
use e2e::games::{self, tamper};
use e2e::{assert_problem, spawn_app, spawn_app_with, Cast, TestApp};
use serde_json::{json, Value};

/// The table's server seed as stored, in hex: what nothing may show while
/// its game runs.
async fn stored_seed(app: &TestApp, id: &str) -> String {
    let id: uuid::Uuid = id.parse().unwrap();
    let seed: Vec<u8> =
        sqlx::query_scalar("SELECT server_seed FROM table_seeds WHERE table_id = $1")
            .bind(id)
            .fetch_one(&app.pool)
            .await
            .expect("a table opened now has a seed");
    hex::encode(seed)
}

/// A two-seat `classique` table: its creator's seed and the joiner's
/// given, started. Its id and the tokens.
async fn seeded_game(app: &TestApp) -> (String, Vec<String>) {
    let tokens = players(app, 2).await;
    let body = json!({"ruleset": "classique", "seats": 2, "client_seed": "alice's-phone:7f3a"});
    let created = json_of(post(app, &tokens[0], "/v1/tables", &body).await, 201).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let join = json!({"client_seed": "bob~seed!"});
    let path = format!("/v1/tables/{id}/players");
    json_of(post(app, &tokens[1], &path, &join).await, 200).await;
    let path = format!("/v1/tables/{id}/start");
    json_of(post_empty(app, &tokens[0], &path).await, 200).await;
    (id, tokens)
}

/// [`seeded_game`], aborted by its creator: over, its seed revealed.
async fn aborted_game(app: &TestApp) -> (String, Vec<String>) {
    let (id, tokens) = seeded_game(app).await;
    let abort = format!("/v1/tables/{id}/abort");
    json_of(post_empty(app, &tokens[0], &abort).await, 200).await;
    (id, tokens)
}

/// Everything the players, a spectator and an admin are sent about a
/// running table and their accounts, as text.
async fn everything_sent(app: &TestApp, id: &str, tokens: &[String]) -> String {
    let spectator = players(app, 1).await.remove(0);
    let admin = admin_token(app).await;
    let mut sent = String::new();
    for token in tokens.iter().chain([&spectator]) {
        for (_, text) in every_read(app, token, &admin, &[id]).await {
            sent += &text;
        }
        for stream in [
            format!("/v1/tables/{id}/view/stream"),
            format!("/v1/tables/{id}/events/stream"),
            "/v1/me/feed/stream".to_owned(),
        ] {
            sent += &first_frames(app, token, &stream).await;
        }
    }
    sent
}

/// What a stream sends first (its opening frames).
async fn first_frames(app: &TestApp, token: &str, path: &str) -> String {
    let mut res = get(app, token, path).await;
    let mut text = String::new();
    let wait = std::time::Duration::from_millis(500);
    while let Ok(Ok(Some(chunk))) = tokio::time::timeout(wait, res.chunk()).await {
        text += &String::from_utf8_lossy(&chunk);
    }
    text
}

/// Every row the database keeps for what it sends later (events, feed
/// items, webhooks and pushes among them), as text, but the seeds' own.
async fn everything_stored(app: &TestApp) -> String {
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables
          WHERE table_schema = 'public' AND table_name <> 'table_seeds'",
    )
    .fetch_all(&app.pool)
    .await
    .unwrap();
    let mut stored = String::new();
    for table in tables {
        let sql = format!("SELECT coalesce(string_agg(t::text, ' '), '') FROM \"{table}\" t");
        stored += &sqlx::query_scalar::<_, String>(&sql)
            .fetch_one(&app.pool)
            .await
            .unwrap();
    }
    stored
}

#[tokio::test]
async fn the_seed_is_committed_to_at_once_and_revealed_only_when_the_game_is_over() {
    let app = spawn_app().await;
    let (id, tokens) = seeded_game(&app).await;
    let seed = stored_seed(&app, &id).await;
    let summary = json_of(
        get(&app, &tokens[0], &format!("/v1/tables/{id}")).await,
        200,
    )
    .await;
    let committed = hex::encode(Sha256::digest(hex::decode(&seed).unwrap()));
    assert_eq!(summary["seed_hash"], committed);
    assert_eq!(summary["server_seed"], Value::Null);
    assert_eq!(summary["players"][0]["client_seed"], "alice's-phone:7f3a");
    assert_eq!(summary["players"][1]["client_seed"], "bob~seed!");
    let events = all_events(&app, &tokens[1], &id).await;
    assert_eq!(events[0]["data"]["seed_hash"], committed);

    // While the game runs, nobody is sent the seed, in any form, on any
    // path; nothing stored for later sending holds it.
    each_moves(&app, &tokens, &id).await;
    let sent = everything_sent(&app, &id, &tokens).await;
    let bytes = hex::decode(&seed).unwrap();
    let base64 = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &bytes);
    for form in [&seed, &seed.to_uppercase(), &base64] {
        assert!(!sent.contains(form.as_str()), "the seed was sent");
    }
    assert!(sent.contains(&committed), "the commitment is public");
    let stored = everything_stored(&app).await;
    assert!(!stored.contains(&seed) && !stored.contains(&base64));

    // The game ends (a resignation): the seed follows its end.
    let path = format!("/v1/tables/{id}/resign");
    json_of(post_empty(&app, &tokens[1], &path).await, 200).await;
    let events = all_events(&app, &tokens[1], &id).await;
    let n = events.len();
    assert_eq!(events[n - 2]["type"], "game_ended");
    assert_eq!(events[n - 1]["type"], "seed_revealed");
    assert_eq!(events[n - 1]["data"]["server_seed"], seed);
    let summary = json_of(
        get(&app, &tokens[0], &format!("/v1/tables/{id}")).await,
        200,
    )
    .await;
    assert_eq!(summary["server_seed"], seed);

    // The replay page and the audit say the deals are the seeds'.
    let replay = get(
        &app,
        &tokens[0],
        &format!("/v1/tables/{id}/rounds/1/replay"),
    )
    .await;
    let replay = json_of(replay, 200).await;
    assert_eq!(
        replay["deals"],
        json!({"status": "verified", "deals": 1, "reshuffles": 0, "seq": null, "reason": null})
    );
    let admin = admin_token(&app).await;
    let audit = get(
        &app,
        &admin,
        &format!("/v1/admin/tables/{id}/audit?fresh=true"),
    )
    .await;
    let audit = json_of(audit, 200).await;
    assert_eq!(audit["ok"], true, "{audit}");
    assert_eq!(audit["deals"]["status"], "verified");
}

/// A body of `content_type` as it is.
async fn post_raw(
    app: &TestApp,
    token: &str,
    path: &str,
    content_type: &str,
    body: &'static str,
) -> reqwest::Response {
    let request = app.client.post(app.url(path)).bearer_auth(token);
    let request = request.header("content-type", content_type).body(body);
    request.send().await.unwrap()
}

/// `huit log verify FILE --table ID` on `log`: its exit code and what it
/// said.
fn log_verify(log: &str, table: &str) -> (Option<i32>, String) {
    let scratch = crate::support::process::Scratch::new("fair-deals");
    let file = scratch.path("table.ndjson");
    std::fs::write(&file, log).unwrap();
    let out = std::process::Command::new(crate::support::process::huit_bin())
        .args(["log", "verify", "--table", table])
        .arg(&file)
        .env_remove("DATABASE_URL")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into(),
    )
}

#[tokio::test]
async fn an_exported_log_proves_its_deals_offline_and_a_deal_altered_and_rechained_fails() {
    let app = spawn_app().await;
    let (id, tokens) = aborted_game(&app).await;
    let log = get(&app, &tokens[0], &format!("/v1/tables/{id}/log")).await;
    let log = log.text().await.unwrap();
    let (code, said) = log_verify(&log, &id);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("deals verified: 1 deal(s)"), "{said}");
    // Without the table's id, the deals cannot be checked (the shuffles
    // name it); another table's id fails at the first deal.
    let other = uuid::Uuid::new_v4().to_string();
    let (code, said) = log_verify(&log, &other);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("deals NOT verified"), "{said}");

    // Two cards of the deal swapped, every hash after it chained again:
    // the chain holds, the deal is not the seeds'.
    let mut events: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let deal = events
        .iter()
        .position(|e| e["type"] == "round_started")
        .unwrap();
    let hands = &mut events[deal]["data"]["hands"];
    let a = hands["0"][0].take();
    let b = std::mem::replace(&mut hands["1"][0], a);
    hands["0"][0] = b;
    let mut prev = events[deal - 1]["hash"].as_str().unwrap().to_owned();
    for e in &mut events[deal..] {
        e["prev_hash"] = prev.clone().into();
        prev = store::chain::line_hash(&prev, e).unwrap();
        e["hash"] = prev.clone().into();
    }
    let forged: String = events.iter().map(|e| format!("{e}\n")).collect();
    let (code, said) = log_verify(&forged, &id);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("hash chain: valid"), "{said}");
    let seq = events[deal]["seq"].as_i64().unwrap();
    assert!(said.contains(&format!("problem at seq {seq}")), "{said}");
}

/// A body that may be left out is held to the server's one limit of JSON
/// bodies (`HUIT_BODY_LIMIT_BYTES`), not to a limit of its own.
#[tokio::test]
async fn an_optional_body_past_the_servers_json_limit_is_413_changing_nothing() {
    let app = spawn_app_with(|s| s.body_limit_bytes = 1024).await;
    let tokens = players(&app, 2).await;
    let body = json!({"ruleset": "classique", "seats": 2});
    let table = json_of(post(&app, &tokens[0], "/v1/tables", &body).await, 201).await;
    let id = table["id"].as_str().unwrap();
    let before = view(&app, &tokens[0], id).await["version"].clone();
    let join = format!("/v1/tables/{id}/players");
    let long = json!({"client_seed": "x".repeat(1500)});
    assert_problem(
        post(&app, &tokens[1], &join, &long).await,
        413,
        "payload_too_large",
    )
    .await;
    assert_eq!(view(&app, &tokens[0], id).await["version"], before);
}

#[tokio::test]
async fn a_seed_is_taken_on_every_way_in_and_a_bad_one_is_refused_changing_nothing() {
    let app = spawn_app().await;
    let tokens = players(&app, 3).await;
    // Refused: a space, nothing, past 64 characters, not ASCII, not text;
    // a body that is not JSON.
    for bad in [
        json!("with space"),
        json!(""),
        json!("x".repeat(65)),
        json!("é"),
        json!(7),
    ] {
        let body = json!({"ruleset": "classique", "seats": 2, "client_seed": bad});
        assert_problem(
            post(&app, &tokens[0], "/v1/tables", &body).await,
            422,
            "invalid_body",
        )
        .await;
        let quick = json!({"ruleset": "classique", "seats": 2, "client_seed": bad});
        assert_problem(
            post(&app, &tokens[0], "/v1/quickplay", &quick).await,
            422,
            "invalid_body",
        )
        .await;
    }
    let mine = json_of(get(&app, &tokens[0], "/v1/me/tables").await, 200).await;
    assert_eq!(mine["tables"].as_array().map(Vec::len), Some(0), "{mine}");

    // Opened without one: the server drew it.
    let body = json!({"ruleset": "classique", "seats": 3});
    let table = json_of(post(&app, &tokens[0], "/v1/tables", &body).await, 201).await;
    let id = table["id"].as_str().unwrap().to_owned();
    let drawn = table["players"][0]["client_seed"].as_str().unwrap();
    assert_eq!(drawn.len(), 32, "{drawn}");
    let join = format!("/v1/tables/{id}/players");
    let bad = json!({"client_seed": "tab\there"});
    assert_problem(
        post(&app, &tokens[1], &join, &bad).await,
        422,
        "invalid_body",
    )
    .await;
    let unknown = json!({"seed": "x"});
    assert_problem(
        post(&app, &tokens[1], &join, &unknown).await,
        422,
        "invalid_body",
    )
    .await;
    let res = post_raw(&app, &tokens[1], &join, "text/plain", "bob").await;
    assert_problem(res, 415, "unsupported_media_type").await;
    let cut = "{\"client_seed\": ";
    let res = post_raw(&app, &tokens[1], &join, "application/json", cut).await;
    assert_problem(res, 400, "malformed_json").await;
    assert_eq!(
        view(&app, &tokens[0], &id).await["version"],
        2,
        "nothing changed"
    );
    // Joined with one, and without a body at all.
    let joined = post(&app, &tokens[1], &join, &json!({"client_seed": "b0b"})).await;
    assert_eq!(
        json_of(joined, 200).await["players"][1]["client_seed"],
        "b0b"
    );
    let joined = json_of(post_empty(&app, &tokens[2], &join).await, 200).await;
    assert_eq!(
        joined["players"][2]["client_seed"].as_str().unwrap().len(),
        32
    );
    // A body of `null` is not one left out: the document says an object.
    let res = post(&app, &tokens[1], &join, &Value::Null).await;
    assert_problem(res, 422, "invalid_body").await;

    // A bot's seat has a seed the server drew.
    let body = json!({"ruleset": "classique", "seats": 2, "bots": [{"level": "basic"}]});
    let with_bot = json_of(post(&app, &tokens[0], "/v1/tables", &body).await, 201).await;
    assert_eq!(
        with_bot["players"][1]["client_seed"]
            .as_str()
            .unwrap()
            .len(),
        32
    );

    // Quick play, an invitation.
    let quick = json!({"ruleset": "moderne", "seats": 2, "client_seed": "quick!"});
    let seated = json_of(post(&app, &tokens[1], "/v1/quickplay", &quick).await, 200).await;
    assert_eq!(seated["players"][0]["client_seed"], "quick!");
    let private = json!({"ruleset": "classique", "seats": 2, "visibility": "private"});
    let private = json_of(post(&app, &tokens[2], "/v1/tables", &private).await, 201).await;
    let code = private["invite_code"].as_str().unwrap();
    let invited = post(
        &app,
        &tokens[0],
        &format!("/v1/invites/{code}"),
        &json!({"client_seed": "inv"}),
    )
    .await;
    assert_eq!(
        json_of(invited, 200).await["players"][1]["client_seed"],
        "inv"
    );
    delete(
        &app,
        &tokens[0],
        &format!("/v1/tables/{}/players/me", private["id"].as_str().unwrap()),
    )
    .await;
}

#[tokio::test]
async fn a_rematch_commits_to_a_new_seed_and_takes_each_players_own() {
    let app = spawn_app().await;
    let (id, tokens) = aborted_game(&app).await;
    let old = json_of(
        get(&app, &tokens[0], &format!("/v1/tables/{id}")).await,
        200,
    )
    .await;
    let path = format!("/v1/tables/{id}/rematch");
    let next = json_of(
        post(&app, &tokens[1], &path, &json!({"client_seed": "again-b"})).await,
        200,
    )
    .await;
    let next_id = next["id"].as_str().unwrap().to_owned();
    assert_ne!(next["seed_hash"], old["seed_hash"]);
    assert_eq!(next["seed_hash"].as_str().unwrap().len(), 64);
    assert_ne!(
        stored_seed(&app, &next_id).await,
        stored_seed(&app, &id).await
    );
    let seated = json_of(
        post(&app, &tokens[0], &path, &json!({"client_seed": "again-a"})).await,
        200,
    )
    .await;
    assert_eq!(seated["id"], next_id.as_str());
    assert_eq!(seated["status"], "playing");
    assert_eq!(seated["players"][0]["client_seed"], "again-a");
    assert_eq!(seated["players"][1]["client_seed"], "again-b");
    let bad = json!({"client_seed": ""});
    assert_problem(
        post(&app, &tokens[0], &path, &bad).await,
        422,
        "invalid_body",
    )
    .await;
}

#[tokio::test]
async fn a_log_whose_reshuffle_was_altered_and_rechained_fails_the_audit_at_that_shuffle() {
    let app = spawn_app().await;
    let cast = Cast::new(&app, &["ana", "bob"], "eve", "boss").await;
    let (id, seed) = (uuid::Uuid::new_v4(), ServerSeed::from_bytes([7; 32]));
    let reshuffles = |g: &games::PlayedGame| {
        g.events()
            .any(|e| matches!(e, TableEvent::Game(Event::StockReshuffled { .. })))
    };
    let game = (1..50)
        .map(|s| {
            let options = json!({"rounds": 1});
            games::play_fair_game("classique", options, &cast.players, s, (&seed, id))
        })
        .find(reshuffles)
        .expect("a game that reshuffles its stock");
    games::store_table_at(&app.pool, id, cast.players[0].0, &game.batches).await;
    let id_text = id.to_string();
    let fair = crate::support::audit(&app, &id_text).await;
    assert_eq!(fair["ok"], true, "{fair}");
    assert_eq!(fair["deals"]["status"], "verified", "{fair}");
    assert!(fair["deals"]["reshuffles"].as_u64().unwrap() >= 1);

    // Two cards of the first reshuffle swapped, the chain made whole again
    // after it, as a forger with the database would.
    let seq = tamper::seq_of(&app.pool, id, "stock_reshuffled", 0).await;
    let stock: Value = sqlx::query_scalar(
        "SELECT data::jsonb -> 'stock' FROM events WHERE table_id = $1 AND seq = $2",
    )
    .bind(id)
    .bind(seq)
    .fetch_one(&app.pool)
    .await
    .unwrap();
    let mut stock = stock.as_array().unwrap().clone();
    let last = stock.len() - 1;
    let other = (0..last).find(|&i| stock[i] != stock[last]).unwrap();
    stock.swap(other, last);
    tamper::allow_changes(&app.pool).await;
    tamper::edit_data(&app.pool, id, seq, "stock", Value::Array(stock)).await;
    tamper::rechain(&app.pool, id, seq).await;
    let forged = crate::support::audit(&app, &id_text).await;
    assert_eq!(forged["chain_valid"], true, "{forged}");
    assert_eq!(forged["ok"], false);
    assert_eq!(forged["first_bad_seq"], seq);
    assert_eq!(forged["deals"]["status"], "failed");
    assert_eq!(forged["deals"]["seq"], seq);
}
