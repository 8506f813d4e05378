//! Finding a game and coming back (docs/API.md): quick play, private
//! tables and their invitations, the rematch, and the player's own tables.
//! Quick play across two processes and its bots after a restart are in
//! `faults`.

use std::time::Duration;

use crate::support::{
    all_events, audit, delete, get, json_of, players, post, post_empty, spawn_second_process,
};
use e2e::{assert_problem, eventually, spawn_app, spawn_app_with, TestApp};
use serde_json::{json, Value};

async fn quickplay(app: &TestApp, token: &str, body: &Value) -> reqwest::Response {
    post(app, token, "/v1/quickplay", body).await
}

async fn summary(app: &TestApp, token: &str, id: &str) -> Value {
    json_of(get(app, token, &format!("/v1/tables/{id}")).await, 200).await
}

fn id_of(summary: &Value) -> String {
    summary["id"].as_str().expect("id").to_owned()
}

/// The ids of the tables of a page.
fn ids_of(page: &Value) -> Vec<String> {
    page["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(id_of)
        .collect()
}

/// The ids of the tables `token` is listed.
async fn listed(app: &TestApp, token: &str) -> Vec<String> {
    ids_of(&json_of(get(app, token, "/v1/tables?limit=100").await, 200).await)
}

#[tokio::test]
async fn four_concurrent_quick_play_callers_land_at_one_table_that_starts_by_itself() {
    let app = spawn_app().await;
    let tokens = players(&app, 4).await;
    let body = json!({"ruleset": "classique", "seats": 4});
    let answers = futures_util::future::join_all(tokens.iter().map(|t| {
        let (app, body) = (&app, &body);
        async move { json_of(quickplay(app, t, body).await, 200).await }
    }))
    .await;
    let id = id_of(&answers[0]);
    for a in &answers {
        assert_eq!(id_of(a), id, "one table for one setting");
        assert_eq!(a["starts_when_full"], true);
        assert_eq!(a["visibility"], "public");
    }
    let table = summary(&app, &tokens[0], &id).await;
    assert_eq!(table["status"], "playing", "it started by itself: {table}");
    assert_eq!(table["players"].as_array().unwrap().len(), 4);
    let kinds: Vec<Value> = all_events(&app, &tokens[0], &id)
        .await
        .iter()
        .map(|e| e["type"].clone())
        .collect();
    let started = kinds.iter().position(|k| k == "game_started").unwrap();
    assert_eq!(kinds[started - 1], "player_joined", "with the fourth join");
    assert_eq!(
        kinds.iter().filter(|k| *k == "player_joined").count(),
        4,
        "every seat taken once"
    );
}

#[tokio::test]
async fn quick_play_matches_exactly_the_same_settings_and_gives_a_waiting_caller_its_table_back() {
    let app = spawn_app().await;
    let [a, b, c, d]: [String; 4] = players(&app, 4).await.try_into().unwrap();
    let two = json!({"ruleset": "classique", "seats": 3});
    let first = json_of(quickplay(&app, &a, &two).await, 200).await;
    let id = id_of(&first);
    assert_eq!(first["status"], "waiting");
    assert_eq!(first["bots_after"], Value::Null);
    // Asking again: the same table, the same seat.
    let again = json_of(quickplay(&app, &a, &two).await, 200).await;
    assert_eq!(id_of(&again), id);
    assert_eq!(again["players"].as_array().unwrap().len(), 1);
    // Options spelled otherwise that make the same rules: the same table.
    let spelled = json!({"ruleset": "classique", "seats": 3, "options": {"joker_counter": false}});
    let joined = json_of(quickplay(&app, &b, &spelled).await, 200).await;
    assert_eq!(id_of(&joined), id);
    // Other rules, seats, a clock or a wait for bots: another table each.
    for other in [
        json!({"ruleset": "classique", "seats": 3, "options": {"voluntary_draw": true}}),
        json!({"ruleset": "classique", "seats": 2}),
        json!({"ruleset": "moderne", "seats": 3}),
        json!({"ruleset": "classique", "seats": 3, "clock": {"turn_seconds": 60}}),
        json!({"ruleset": "classique", "seats": 3, "bots_after": 600}),
    ] {
        let t = json_of(quickplay(&app, &c, &other).await, 200).await;
        assert_ne!(id_of(&t), id, "{other}");
    }
    // A table that started is no longer waiting: the next caller opens one.
    let full = json_of(quickplay(&app, &d, &two).await, 200).await;
    assert_eq!(id_of(&full), id);
    assert_eq!(full["status"], "playing");
    let next = json_of(quickplay(&app, &a, &two).await, 200).await;
    assert_ne!(id_of(&next), id);
    // Nobody starts a quick-play table, nor seats a bot there, by hand.
    let next_id = id_of(&next);
    let start = post_empty(&app, &a, &format!("/v1/tables/{next_id}/start")).await;
    assert_problem(start, 409, "starts_by_itself").await;
    let bot = post(
        &app,
        &a,
        &format!("/v1/tables/{next_id}/bots"),
        &json!({"level": "basic"}),
    )
    .await;
    assert_problem(bot, 409, "starts_by_itself").await;
}

#[tokio::test]
async fn a_quick_play_table_its_last_person_left_is_closed_to_quick_play() {
    let app = spawn_app().await;
    let [a, b, c]: [String; 3] = players(&app, 3).await.try_into().unwrap();
    let body = json!({"ruleset": "classique", "seats": 3});
    let first = id_of(&json_of(quickplay(&app, &a, &body).await, 200).await);
    let left = delete(&app, &a, &format!("/v1/tables/{first}/players/me")).await;
    json_of(left, 200).await;
    // Nobody waits there: the next caller opens another table.
    let second = id_of(&json_of(quickplay(&app, &b, &body).await, 200).await);
    assert_ne!(second, first);
    assert_eq!(
        id_of(&json_of(quickplay(&app, &c, &body).await, 200).await),
        second
    );
    // The empty table closed: ended (`aborted`), listed nowhere, and
    // joined by nobody, by its id either: refused, nothing written.
    let closed = summary(&app, &a, &first).await;
    assert_eq!(closed["status"], "aborted", "{closed}");
    let waiting = get(&app, &c, "/v1/tables?status=waiting&limit=100").await;
    assert!(!ids_of(&json_of(waiting, 200).await).contains(&first));
    let back = post_empty(&app, &a, &format!("/v1/tables/{first}/players")).await;
    assert_problem(back, 409, "table_closed").await;
    assert_eq!(summary(&app, &a, &first).await["players"], json!([]));
}

#[tokio::test]
async fn quick_play_refuses_bad_settings_and_is_rate_limited_like_opening_tables() {
    let app = spawn_app_with(|s| s.tables_per_minute = 2).await;
    let [a]: [String; 1] = players(&app, 1).await.try_into().unwrap();
    for (body, status, code) in [
        (
            json!({"ruleset": "classique", "seats": 2, "bots_after": 0}),
            422,
            "invalid_body",
        ),
        (
            json!({"ruleset": "classique", "seats": 2, "bots_after": 3601}),
            422,
            "invalid_body",
        ),
        (json!({"ruleset": "nope", "seats": 2}), 422, "invalid_rules"),
        (
            json!({"ruleset": "classique", "seats": 11}),
            422,
            "invalid_rules",
        ),
        (
            json!({"ruleset": "classique", "seats": 2, "clock": {"turn_seconds": 1}}),
            422,
            "invalid_clock",
        ),
        (
            json!({"ruleset": "classique", "seats": 2, "bots": []}),
            422,
            "invalid_body",
        ),
    ] {
        assert_problem(quickplay(&app, &a, &body).await, status, code).await;
    }
    // None of those cost anything; two calls do.
    for seats in [2, 3] {
        let body = json!({"ruleset": "classique", "seats": seats});
        json_of(quickplay(&app, &a, &body).await, 200).await;
    }
    let body = json!({"ruleset": "classique", "seats": 4});
    let refused = quickplay(&app, &a, &body).await;
    assert!(refused.headers().contains_key("retry-after"));
    assert_problem(refused, 429, "too_many_requests").await;
    let none = sqlx::query_scalar::<_, i64>("SELECT count(*) FROM game_tables")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(none, 2, "a refused call opens nothing");
}

#[tokio::test]
async fn quick_plays_bots_take_the_empty_seats_after_the_wait_and_the_game_starts() {
    let app = spawn_app_with(|s| {
        s.bot_delay_ms = 0;
        s.due_poll_ms = 20;
    })
    .await;
    let [a]: [String; 1] = players(&app, 1).await.try_into().unwrap();
    let body = json!({"ruleset": "classique", "seats": 3, "bots_after": 1});
    let table = json_of(quickplay(&app, &a, &body).await, 200).await;
    assert_eq!(table["bots_after"], 1);
    let id = id_of(&table);
    let started = eventually(Duration::from_secs(10), || {
        let (app, a, id) = (&app, &a, &id);
        async move {
            let t = summary(app, a, id).await;
            (t["status"] == "playing").then_some(t)
        }
    })
    .await
    .expect("the bots came and the game started");
    let bots: Vec<&Value> = started["players"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["bot"] == "basic")
        .collect();
    assert_eq!(bots.len(), 2, "{started}");
    // Quick play's bots are the server's: no account's bot caps hold them.
    let log = all_events(&app, &a, &id).await;
    let kinds: Vec<&str> = log.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        &kinds[..5],
        [
            "table_created",
            "player_joined",
            "bot_seated",
            "bot_seated",
            "game_started"
        ]
    );
    assert_eq!(log[0]["data"]["bots_after"], 1);
    assert_eq!(log[0]["data"]["starts_when_full"], true);
}

#[tokio::test]
async fn a_private_table_is_listed_to_its_players_only_and_joined_through_its_invitation() {
    let app = spawn_app().await;
    let [a, b, c]: [String; 3] = players(&app, 3).await.try_into().unwrap();
    let body = json!({"ruleset": "classique", "seats": 3, "visibility": "private"});
    let table = json_of(post(&app, &a, "/v1/tables", &body).await, 201).await;
    let id = id_of(&table);
    assert_eq!(table["visibility"], "private");
    let code = table["invite_code"]
        .as_str()
        .expect("the creator sees the code");
    assert_eq!(code.len(), 10);
    assert!(code
        .bytes()
        .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase()));
    // Only its creator is shown the code; others do not find the table,
    // not even by its id (told as of a table that does not exist).
    assert_eq!(summary(&app, &a, &id).await["invite_code"], code);
    let unknown = get(&app, &b, &format!("/v1/tables/{id}")).await;
    assert_problem(unknown, 404, "not_found").await;
    assert!(listed(&app, &a).await.contains(&id));
    assert!(!listed(&app, &b).await.contains(&id));
    // The log says private, and never the code.
    let log = all_events(&app, &a, &id).await;
    assert_eq!(log[0]["data"]["visibility"], "private");
    assert!(!serde_json::to_string(&log).unwrap().contains(code));
    // Not joined by its id.
    let open = post_empty(&app, &b, &format!("/v1/tables/{id}/players")).await;
    assert_problem(open, 404, "not_found").await;
    // Through its code, as said aloud: any case, a dash.
    let spoken = format!("{}-{}", &code[..5], &code[5..]).to_uppercase();
    let joined = json_of(
        post_empty(&app, &b, &format!("/v1/invites/{spoken}")).await,
        200,
    )
    .await;
    assert_eq!(id_of(&joined), id);
    assert_eq!(joined["invite_code"], Value::Null, "b did not create it");
    assert_eq!(summary(&app, &b, &id).await["invite_code"], Value::Null);
    assert!(
        listed(&app, &b).await.contains(&id),
        "listed to its players"
    );
    // Again: the same table, no second seat.
    let again = json_of(
        post_empty(&app, &b, &format!("/v1/invites/{code}")).await,
        200,
    )
    .await;
    assert_eq!(again["players"].as_array().unwrap().len(), 2);
    assert!(!listed(&app, &c).await.contains(&id));
    // Codes that are no code, or no table's.
    for wrong in ["0000000000", "short", "uuuuuuuuuu", &"7".repeat(200)] {
        let res = post_empty(&app, &c, &format!("/v1/invites/{wrong}")).await;
        assert_problem(res, 404, "invitation_not_found").await;
    }
    // A public table has no invitation.
    let public = json!({"ruleset": "classique", "seats": 2});
    let public = json_of(post(&app, &c, "/v1/tables", &public).await, 201).await;
    assert_eq!(public["invite_code"], Value::Null);
    let renew = delete(&app, &c, &format!("/v1/tables/{}/invite", id_of(&public))).await;
    assert_problem(renew, 409, "not_private").await;
}

#[tokio::test]
async fn a_renewed_invitation_refuses_the_old_code_in_every_process() {
    let app = spawn_app().await;
    let other = spawn_second_process(&app).await;
    let [a, b, c]: [String; 3] = players(&app, 3).await.try_into().unwrap();
    let body = json!({"ruleset": "classique", "seats": 3, "visibility": "private"});
    let table = json_of(post(&app, &a, "/v1/tables", &body).await, 201).await;
    let (id, old) = (
        id_of(&table),
        table["invite_code"].as_str().unwrap().to_owned(),
    );
    // The other process has the table cached with its first code.
    assert_eq!(summary(&other, &a, &id).await["invite_code"], old.as_str());
    let renew = delete(&app, &b, &format!("/v1/tables/{id}/invite")).await;
    assert_problem(renew, 404, "not_found").await;
    let renewed = json_of(
        delete(&app, &a, &format!("/v1/tables/{id}/invite")).await,
        200,
    )
    .await;
    let new = renewed["invite_code"].as_str().unwrap().to_owned();
    assert_ne!(new, old);
    for served in [&app, &other] {
        assert_eq!(summary(served, &a, &id).await["invite_code"], new.as_str());
        let res = post_empty(served, &b, &format!("/v1/invites/{old}")).await;
        assert_problem(res, 404, "invitation_not_found").await;
    }
    json_of(
        post_empty(&other, &b, &format!("/v1/invites/{new}")).await,
        200,
    )
    .await;
    json_of(
        post_empty(&app, &c, &format!("/v1/invites/{new}")).await,
        200,
    )
    .await;
}

#[tokio::test]
async fn wrong_invitation_codes_are_throttled_per_account_and_per_address() {
    let app = spawn_app_with(|s| {
        s.login_max_failures = 3;
        s.login_max_failures_per_address = 5;
    })
    .await;
    let [a, b, c]: [String; 3] = players(&app, 3).await.try_into().unwrap();
    let body = json!({"ruleset": "classique", "seats": 3, "visibility": "private"});
    let table = json_of(post(&app, &a, "/v1/tables", &body).await, 201).await;
    let code = table["invite_code"].as_str().unwrap();
    let guess = |token: &str, n: usize| {
        let (app, token) = (&app, token.to_owned());
        async move {
            let res = post_empty(app, &token, &format!("/v1/invites/{n:010}")).await;
            assert_problem(res, 404, "invitation_not_found").await;
        }
    };
    for n in 0..3 {
        guess(&b, n).await;
    }
    // b is locked out, even with the right code, which is not checked.
    let res = post_empty(&app, &b, &format!("/v1/invites/{code}")).await;
    assert!(res.headers().contains_key("retry-after"));
    assert_problem(res, 429, "too_many_requests").await;
    // c from the same address: two more wrong codes lock the address out.
    for n in 3..5 {
        guess(&c, n).await;
    }
    let res = post_empty(&app, &c, &format!("/v1/invites/{code}")).await;
    assert_problem(res, 429, "too_many_requests").await;
    let seated = summary(&app, &a, &id_of(&table)).await;
    assert_eq!(
        seated["players"].as_array().unwrap().len(),
        1,
        "nobody got in"
    );
}

/// A finished game of two persons and a basic bot (the bot at seat 1):
/// both persons resign. Its id and the persons' tokens in seat order.
async fn finished(app: &TestApp) -> (String, Vec<String>) {
    let tokens = players(app, 2).await;
    let body = json!({"ruleset": "classique", "seats": 3, "bots": [{"level": "basic"}]});
    let table = json_of(post(app, &tokens[0], "/v1/tables", &body).await, 201).await;
    let id = id_of(&table);
    let join = post_empty(app, &tokens[1], &format!("/v1/tables/{id}/players")).await;
    json_of(join, 200).await;
    let start = post_empty(app, &tokens[0], &format!("/v1/tables/{id}/start")).await;
    json_of(start, 200).await;
    let early = post_empty(app, &tokens[0], &format!("/v1/tables/{id}/rematch")).await;
    assert_problem(early, 409, "game_not_over").await;
    for t in &tokens {
        let res = post_empty(app, t, &format!("/v1/tables/{id}/resign")).await;
        json_of(res, 200).await;
    }
    assert_eq!(summary(app, &tokens[0], &id).await["status"], "finished");
    (id, tokens)
}

/// The first dealer of a table's game, from its log.
async fn first_dealer(app: &TestApp, token: &str, id: &str) -> u64 {
    let log = all_events(app, token, id).await;
    let dealt = log.iter().find(|e| e["type"] == "round_started").unwrap();
    dealt["data"]["dealer"].as_u64().unwrap()
}

/// The seat each account holds in a summary.
fn seats_of(summary: &Value) -> Vec<(Value, Value)> {
    let mut seats: Vec<(Value, Value)> = summary["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["seat"].clone(), p["account_id"].clone()))
        .collect();
    seats.sort_by_key(|(seat, _)| seat.as_u64());
    seats
}

#[tokio::test]
async fn a_rematch_is_one_table_however_often_asked_and_starts_when_every_person_is_back() {
    let app = spawn_app().await;
    let (old, tokens) = finished(&app).await;
    let outsider = players(&app, 1).await.remove(0);
    let res = post_empty(&app, &outsider, &format!("/v1/tables/{old}/rematch")).await;
    assert_problem(res, 403, "not_seated").await;
    let asked = post_empty(&app, &tokens[1], &format!("/v1/tables/{old}/rematch")).await;
    let next = json_of(asked, 200).await;
    let next_id = id_of(&next);
    assert_eq!(next["rematch_of"], old.as_str());
    assert_eq!(next["status"], "waiting", "the other person is not back");
    assert_eq!(next["starts_when_full"], true);
    let before = summary(&app, &tokens[0], &old).await;
    assert_eq!(before["rematch"], next_id.as_str());
    assert_eq!(before["rules"], next["rules"]);
    // Asked again: the same table.
    let again = post_empty(&app, &tokens[1], &format!("/v1/tables/{old}/rematch")).await;
    assert_eq!(id_of(&json_of(again, 200).await), next_id);
    // The others hear of it on the old table; its audit is still clean.
    let log = all_events(&app, &tokens[0], &old).await;
    let offered = log.last().unwrap();
    assert_eq!(offered["type"], "rematch_offered");
    assert_eq!(offered["data"]["seat"], 2);
    assert_eq!(offered["data"]["table_id"], next_id.as_str());
    let audited = audit(&app, &old).await;
    assert_eq!(audited["ok"], true, "{audited}");
    // Its seats are kept for the persons of the game.
    let res = post_empty(&app, &outsider, &format!("/v1/tables/{next_id}/players")).await;
    assert_problem(res, 403, "seat_reserved").await;
    let back = post_empty(&app, &tokens[0], &format!("/v1/tables/{old}/rematch")).await;
    let started = json_of(back, 200).await;
    assert_eq!(id_of(&started), next_id);
    assert_eq!(started["status"], "playing", "everyone is back: {started}");
    let old_summary = summary(&app, &tokens[0], &old).await;
    assert_eq!(seats_of(&started), seats_of(&old_summary), "the same seats");
    assert_eq!(started["players"][1]["bot"], "basic");
    let (d0, d1) = (
        first_dealer(&app, &tokens[0], &old).await,
        first_dealer(&app, &tokens[0], &next_id).await,
    );
    assert_eq!(d1, (d0 + 1) % 3, "the first dealer moves one place on");
    let again = post_empty(&app, &tokens[0], &format!("/v1/tables/{old}/rematch")).await;
    assert_eq!(id_of(&json_of(again, 200).await), next_id, "safe to retry");
}

#[tokio::test]
async fn two_players_asking_for_a_rematch_at_once_get_one_table() {
    let app = spawn_app().await;
    let other = spawn_second_process(&app).await;
    let (old, tokens) = finished(&app).await;
    let path = format!("/v1/tables/{old}/rematch");
    let (x, y) = tokio::join!(
        post_empty(&app, &tokens[0], &path),
        post_empty(&other, &tokens[1], &path)
    );
    let (x, y) = (json_of(x, 200).await, json_of(y, 200).await);
    assert_eq!(id_of(&x), id_of(&y));
    let next = summary(&app, &tokens[0], &id_of(&x)).await;
    assert_eq!(next["status"], "playing");
    let opened = sqlx::query_scalar::<_, i64>(
        "SELECT count(*) FROM events WHERE type = 'rematch_offered' AND table_id = $1::uuid",
    )
    .bind(&old)
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!(opened, 1);
    let tables = sqlx::query_scalar::<_, i64>("SELECT count(*) FROM game_tables")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(tables, 2, "no rematch opened and dropped half-way");
}

#[tokio::test]
async fn an_invitation_meets_the_table_as_it_is_and_a_rematch_counts_as_opening_a_table() {
    let app = spawn_app_with(|s| s.tables_per_minute = 2).await;
    let [a, b, c]: [String; 3] = players(&app, 3).await.try_into().unwrap();
    let body = json!({"ruleset": "classique", "seats": 2, "visibility": "private"});
    let table = json_of(post(&app, &a, "/v1/tables", &body).await, 201).await;
    let (id, code) = (
        id_of(&table),
        table["invite_code"].as_str().unwrap().to_owned(),
    );
    let page = json_of(get(&app, &a, "/v1/tables?mine=true").await, 200).await;
    assert_eq!(page["tables"][0]["visibility"], "private");
    json_of(
        post_empty(&app, &b, &format!("/v1/invites/{code}")).await,
        200,
    )
    .await;
    // Full: the code still names the table, which has no seat left.
    let full = post_empty(&app, &c, &format!("/v1/invites/{code}")).await;
    assert_problem(full, 409, "table_full").await;
    // A table that is not there.
    let gone = delete(
        &app,
        &a,
        &format!("/v1/tables/{}/invite", uuid::Uuid::new_v4()),
    )
    .await;
    assert_problem(gone, 404, "not_found").await;
    // The rematch of a private table is private, with a code of its own,
    // and its seats are kept even for someone holding that code.
    let start = post_empty(&app, &a, &format!("/v1/tables/{id}/start")).await;
    json_of(start, 200).await;
    // a resigns: b alone is left, and the game is over.
    json_of(
        post_empty(&app, &a, &format!("/v1/tables/{id}/resign")).await,
        200,
    )
    .await;
    let next = json_of(
        post_empty(&app, &a, &format!("/v1/tables/{id}/rematch")).await,
        200,
    )
    .await;
    assert_eq!(next["visibility"], "private");
    let next_code = next["invite_code"]
        .as_str()
        .expect("its creator sees its code");
    assert_ne!(next_code, code);
    let res = post_empty(&app, &c, &format!("/v1/invites/{next_code}")).await;
    assert_problem(res, 403, "seat_reserved").await;
    // b comes back (sitting at a rematch opens nothing); a has opened two
    // tables this minute, the rematch one of them: the next is refused.
    let back = post_empty(&app, &b, &format!("/v1/tables/{id}/rematch")).await;
    assert_eq!(json_of(back, 200).await["status"], "playing");
    let third = json!({"ruleset": "classique", "seats": 2});
    let opened = post(&app, &a, "/v1/tables", &third).await;
    assert_problem(opened, 429, "too_many_requests").await;
    json_of(post(&app, &b, "/v1/tables", &third).await, 201).await;
}

/// A started two-player `classique` table of `a` and `b` (`clock` when
/// given), played on until it is `a`'s turn.
async fn a_to_play(app: &TestApp, a: &str, b: &str, clock: Option<Value>) -> String {
    let mut body = json!({"ruleset": "classique", "seats": 2, "options": {"target": 100000}});
    if let Some(clock) = clock {
        body["clock"] = clock;
    }
    let id = id_of(&json_of(post(app, a, "/v1/tables", &body).await, 201).await);
    json_of(
        post_empty(app, b, &format!("/v1/tables/{id}/players")).await,
        200,
    )
    .await;
    json_of(
        post_empty(app, a, &format!("/v1/tables/{id}/start")).await,
        200,
    )
    .await;
    loop {
        let v = crate::support::view(app, b, &id).await;
        if v["current_seat"] == 0 {
            return id;
        }
        let mv = v["legal_moves"][0].clone();
        let res = crate::support::play(app, b, &id, &mv, v["version"].as_i64()).await;
        json_of(res, 200).await;
    }
}

#[tokio::test]
async fn my_tables_on_turn_come_soonest_deadline_first_with_the_count_of_them() {
    let app = spawn_app().await;
    let [a, b, c]: [String; 3] = players(&app, 3).await.try_into().unwrap();
    let slow = a_to_play(&app, &a, &b, Some(json!({"turn_seconds": 3600}))).await;
    let none = a_to_play(&app, &a, &b, None).await;
    let fast = a_to_play(&app, &a, &b, Some(json!({"turn_seconds": 60}))).await;
    // A table that waits for someone else, and one that has not started.
    let theirs = a_to_play(&app, &c, &a, None).await;
    let waiting = json!({"ruleset": "classique", "seats": 3});
    let waiting = id_of(&json_of(post(&app, &a, "/v1/tables", &waiting).await, 201).await);

    let page = json_of(get(&app, &a, "/v1/me/tables?turn=mine").await, 200).await;
    assert_eq!(ids_of(&page), [fast.clone(), slow.clone(), none.clone()]);
    assert_eq!(page["my_turn"], 3);
    assert_eq!(page["next"], Value::Null);
    let first = &page["tables"][0];
    assert!(first["clock"]["deadline"].is_string(), "{first}");
    // Every table a sits at that is not over, oldest first.
    let all = json_of(get(&app, &a, "/v1/me/tables").await, 200).await;
    assert_eq!(
        ids_of(&all),
        [
            slow.clone(),
            none.clone(),
            fast.clone(),
            theirs.clone(),
            waiting
        ]
    );
    assert_eq!(all["my_turn"], 3);
    // `theirs` waits for c, not for a, who sits there too.
    let c_page = json_of(get(&app, &c, "/v1/me/tables?turn=mine").await, 200).await;
    assert_eq!(
        (c_page["my_turn"].clone(), ids_of(&c_page)),
        (json!(1), vec![theirs])
    );
    // Once a's moves pass the turn, the table leaves a's list for b's.
    loop {
        let v = crate::support::view(&app, &a, &fast).await;
        if v["current_seat"] == 1 {
            break;
        }
        let (mv, version) = (&v["legal_moves"][0], v["version"].as_i64());
        json_of(
            crate::support::play(&app, &a, &fast, mv, version).await,
            200,
        )
        .await;
    }
    let now = json_of(get(&app, &a, "/v1/me/tables?turn=mine").await, 200).await;
    assert_eq!(ids_of(&now), [slow.clone(), none.clone()]);
    assert_eq!(now["my_turn"], 2);
    let b_page = json_of(get(&app, &b, "/v1/me/tables?turn=mine").await, 200).await;
    assert_eq!(ids_of(&b_page), [fast.as_str()]);
    // Pages, by cursor.
    let one = json_of(get(&app, &a, "/v1/me/tables?turn=mine&limit=1").await, 200).await;
    let next = one["next"].as_str().expect("more follow").to_owned();
    let two = get(
        &app,
        &a,
        &format!("/v1/me/tables?turn=mine&limit=1&after={next}"),
    )
    .await;
    let two = json_of(two, 200).await;
    assert_ne!(ids_of(&one), ids_of(&two));
    assert_eq!(two["my_turn"], now["my_turn"]);
    // A game that is over is not listed.
    json_of(
        post_empty(&app, &a, &format!("/v1/tables/{slow}/resign")).await,
        200,
    )
    .await;
    let all = json_of(get(&app, &a, "/v1/me/tables").await, 200).await;
    assert!(!ids_of(&all).contains(&slow));
    for bad in ["turn=yours", "limit=0", "limit=101", "after=nope"] {
        let res = get(&app, &a, &format!("/v1/me/tables?{bad}")).await;
        assert_problem(res, 400, "invalid_query").await;
    }
}
