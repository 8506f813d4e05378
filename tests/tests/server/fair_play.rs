//! What a security review of finding a game and ratings found open (issue
//! 39), each shown closed: quick play's bots count against the bot caps of
//! the people at their table; a rated game is one that people played
//! (D43); a private table is its members' only; a rematch is safe to
//! retry; a paused webhook URL keeps a bounded outbox; a quick-play table
//! nobody waits at closes, and an account waits at one quick-play table of
//! a ruleset.

use std::time::Duration;

use crate::feed::two_player_table;
use crate::support::receiver::Receiver;
use crate::support::{
    admin_token, delete, each_moves, get, json_of, players, post, post_empty, spawn_second_process,
    username, view,
};
use e2e::{assert_problem, eventually, spawn_app, spawn_app_with, TestApp};
use serde_json::{json, Value};

fn id_of(summary: &Value) -> String {
    summary["id"].as_str().expect("id").to_owned()
}

async fn count(app: &TestApp, sql: &str) -> i64 {
    sqlx::query_scalar(sql)
        .fetch_one(&app.pool)
        .await
        .expect("counted")
}

/// A player's public profile and a ruleset's leaderboard, without a token.
async fn public(app: &TestApp, path: &str) -> Value {
    let res = app.client.get(app.url(path)).send().await.expect("sent");
    json_of(res, 200).await
}

#[tokio::test]
async fn quick_plays_bots_count_against_the_bot_caps_of_the_people_at_their_table() {
    let app = spawn_app_with(|s| {
        s.bot_delay_ms = 0;
        s.due_poll_ms = 20;
    })
    .await;
    let [a]: [String; 1] = players(&app, 1).await.try_into().unwrap();
    // The review's call: 64 seats, bots after a second. 63 bots would come
    // for one account whose cap is 8: refused at once, nothing written.
    let farm = json!({"ruleset": "classique", "seats": 64, "bots_after": 1,
        "options": {"players": {"min": 2, "max": 64}}});
    let res = post(&app, &a, "/v1/quickplay", &farm).await;
    assert!(res.headers().contains_key("retry-after"));
    assert_problem(res, 429, "too_many_bots").await;
    assert_eq!(count(&app, "SELECT count(*) FROM game_tables").await, 0);
    // Quick play has an ordinary table's seat and option limits.
    for path in ["/v1/quickplay", "/v1/tables"] {
        let body = json!({"ruleset": "classique", "seats": 65,
            "options": {"players": {"min": 2, "max": 65}}});
        assert_problem(post(&app, &a, path, &body).await, 422, "invalid_rules").await;
    }
    // Two quick-play tables of two rulesets waiting for 4 bots each: 8,
    // the cap; a third table's bots would pass it.
    for ruleset in ["classique", "moderne"] {
        let body = json!({"ruleset": ruleset, "seats": 5, "bots_after": 1});
        json_of(post(&app, &a, "/v1/quickplay", &body).await, 200).await;
    }
    let third = json!({"ruleset": "757", "seats": 2, "bots_after": 1});
    assert_problem(
        post(&app, &a, "/v1/quickplay", &third).await,
        429,
        "too_many_bots",
    )
    .await;
    // The bots come and both games start: 8 bots run for `a`.
    let started = eventually(Duration::from_secs(10), || async {
        let playing = count(
            &app,
            "SELECT count(*) FROM game_tables WHERE status = 'playing'",
        )
        .await;
        (playing == 2).then_some(())
    })
    .await;
    assert!(started.is_some(), "both tables got their bots");
    let bots = count(&app, "SELECT sum(bots)::bigint FROM game_tables").await;
    assert_eq!(bots, 8);
    // A bot seated by hand now passes the cap too: refused, nothing written.
    let body = json!({"ruleset": "757", "seats": 2, "bots": [{"level": "random"}]});
    assert_problem(
        post(&app, &a, "/v1/tables", &body).await,
        429,
        "too_many_bots",
    )
    .await;
    assert_eq!(count(&app, "SELECT count(*) FROM game_tables").await, 2);
}

/// The `due_at` of table `id`.
async fn due_at(app: &TestApp, id: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    sqlx::query_scalar("SELECT due_at FROM game_tables WHERE id = $1::uuid")
        .bind(id)
        .fetch_one(&app.pool)
        .await
        .expect("a table")
}

#[tokio::test]
async fn quick_plays_bots_are_put_off_while_they_would_pass_a_players_cap() {
    let app = spawn_app_with(|s| {
        s.bot_delay_ms = 0;
        s.due_poll_ms = 20;
        s.max_bots = 3;
    })
    .await;
    let [a, b]: [String; 2] = players(&app, 2).await.try_into().unwrap();
    // a waits for 2 bots at a classique table (a minute away); b for 2 at
    // a moderne one, where a joins: 2 + 1 bots to come for a, its cap.
    let classique = json!({"ruleset": "classique", "seats": 3, "bots_after": 60});
    json_of(post(&app, &a, "/v1/quickplay", &classique).await, 200).await;
    let moderne = json!({"ruleset": "moderne", "seats": 3, "bots_after": 60});
    let table = json_of(post(&app, &b, "/v1/quickplay", &moderne).await, 200).await;
    let id = id_of(&table);
    json_of(post(&app, &a, "/v1/quickplay", &moderne).await, 200).await;
    // b leaves: the moderne table's bots would make 2 + 2 for a, past the
    // cap. Due now, they are put off (the table waits for people); no
    // bot is seated past the cap.
    json_of(
        delete(&app, &b, &format!("/v1/tables/{id}/players/me")).await,
        200,
    )
    .await;
    sqlx::query("UPDATE game_tables SET due_at = now() WHERE id = $1::uuid")
        .bind(&id)
        .execute(&app.pool)
        .await
        .unwrap();
    let later = eventually(Duration::from_secs(10), || async {
        let due = due_at(&app, &id).await;
        due.filter(|d| *d > chrono::Utc::now() + chrono::Duration::seconds(30))
    })
    .await;
    assert!(later.is_some(), "the bots were put off");
    let now = json_of(get(&app, &a, &format!("/v1/tables/{id}")).await, 200).await;
    assert_eq!(now["status"], "waiting");
    assert_eq!(
        count(
            &app,
            "SELECT coalesce(sum(bots), 0)::bigint FROM game_tables"
        )
        .await,
        0
    );
    // b comes back: 1 bot to come for each there, within the caps; due
    // again, it comes.
    json_of(post(&app, &b, "/v1/quickplay", &moderne).await, 200).await;
    sqlx::query("UPDATE game_tables SET due_at = now() WHERE id = $1::uuid")
        .bind(&id)
        .execute(&app.pool)
        .await
        .unwrap();
    let started = eventually(Duration::from_secs(10), || async {
        let t = json_of(get(&app, &a, &format!("/v1/tables/{id}")).await, 200).await;
        (t["status"] == "playing").then_some(t)
    })
    .await
    .expect("the bot came");
    let bots = started["players"].as_array().unwrap();
    assert_eq!(bots.iter().filter(|p| p["bot"] == "basic").count(), 1);
}

#[tokio::test]
async fn d43_a_game_its_players_resigned_before_moving_is_not_rated_nor_on_the_board() {
    let app = spawn_app().await;
    let tokens = players(&app, 10).await;
    // The review's farm: nine accounts join a 10-seat table, the creator
    // starts, the nine resign before any card is played.
    let body = json!({"ruleset": "classique", "seats": 10});
    let table = json_of(post(&app, &tokens[0], "/v1/tables", &body).await, 201).await;
    let id = id_of(&table);
    for t in &tokens[1..] {
        json_of(
            post_empty(&app, t, &format!("/v1/tables/{id}/players")).await,
            200,
        )
        .await;
    }
    json_of(
        post_empty(&app, &tokens[0], &format!("/v1/tables/{id}/start")).await,
        200,
    )
    .await;
    for t in &tokens[1..] {
        let res = post_empty(&app, t, &format!("/v1/tables/{id}/resign")).await;
        json_of(res, 200).await;
    }
    assert_eq!(view(&app, &tokens[0], &id).await["status"], "finished");
    let creator = username(&app, &tokens[0]).await;
    let profile = public(&app, &format!("/v1/players/{creator}")).await;
    assert_eq!(profile["stats"], json!([]), "{profile}");
    let board = public(&app, "/v1/leaderboards/classique").await;
    assert_eq!(board["players"], json!([]));
    assert_eq!(count(&app, "SELECT count(*) FROM rated_results").await, 0);
}

#[tokio::test]
async fn d43_a_game_the_server_played_for_players_who_never_moved_is_not_rated() {
    let app = spawn_app_with(|s| {
        s.bot_delay_ms = 0;
        s.due_poll_ms = 20;
    })
    .await;
    let [a, b]: [String; 2] = players(&app, 2).await.try_into().unwrap();
    // Two accounts start a game with a 5 s clock and never move: each
    // times out once, goes away, and the server plays the rest.
    let body = json!({"ruleset": "classique", "seats": 2, "options": {"rounds": 1},
        "clock": {"turn_seconds": 5, "away_after": 1}});
    let table = json_of(post(&app, &a, "/v1/tables", &body).await, 201).await;
    let id = id_of(&table);
    json_of(
        post_empty(&app, &b, &format!("/v1/tables/{id}/players")).await,
        200,
    )
    .await;
    json_of(
        post_empty(&app, &a, &format!("/v1/tables/{id}/start")).await,
        200,
    )
    .await;
    let over = eventually(Duration::from_secs(40), || async {
        let v = view(&app, &a, &id).await;
        (v["status"] == "finished").then_some(v)
    })
    .await;
    assert!(over.is_some(), "the server played the game to its end");
    let server_moves = count(
        &app,
        "SELECT count(*) FROM events WHERE type IN ('bot_moved', 'turn_timed_out')",
    )
    .await;
    assert!(server_moves > 2, "{server_moves}");
    assert_eq!(count(&app, "SELECT count(*) FROM rated_results").await, 0);
    for t in [&a, &b] {
        let name = username(&app, t).await;
        let profile = public(&app, &format!("/v1/players/{name}")).await;
        assert_eq!(profile["stats"], json!([]));
    }
}

/// Every way to read or act on a table by its id, for `token`: each
/// answer's status and body.
async fn every_route(app: &TestApp, token: &str, id: &str) -> Vec<(String, u16, Value)> {
    let mut answers = Vec::new();
    let reads = [
        format!("/v1/tables/{id}"),
        format!("/v1/tables/{id}/view"),
        format!("/v1/tables/{id}/events"),
        format!("/v1/tables/{id}/rounds"),
        format!("/v1/tables/{id}/rounds/1/replay"),
        format!("/v1/tables/{id}/log"),
        format!("/v1/tables/{id}/view/stream"),
        format!("/v1/tables/{id}/events/stream"),
    ];
    for path in reads {
        let res = get(app, token, &path).await;
        let status = res.status().as_u16();
        answers.push((path, status, res.json().await.unwrap_or(Value::Null)));
    }
    let writes = [
        format!("/v1/tables/{id}/players"),
        format!("/v1/tables/{id}/rematch"),
        format!("/v1/tables/{id}/resign"),
        format!("/v1/tables/{id}/seats/me/back"),
    ];
    for path in writes {
        let res = post_empty(app, token, &path).await;
        let status = res.status().as_u16();
        answers.push((path, status, res.json().await.unwrap_or(Value::Null)));
    }
    let mv = json!({"move": {"type": "draw"}});
    let res = post(app, token, &format!("/v1/tables/{id}/moves"), &mv).await;
    let status = res.status().as_u16();
    answers.push((
        "moves".into(),
        status,
        res.json().await.unwrap_or(Value::Null),
    ));
    let dispute = json!({"reason": "let me in"});
    let res = post(app, token, &format!("/v1/tables/{id}/disputes"), &dispute).await;
    let status = res.status().as_u16();
    answers.push((
        "disputes".into(),
        status,
        res.json().await.unwrap_or(Value::Null),
    ));
    let res = delete(app, token, &format!("/v1/tables/{id}/invite")).await;
    let status = res.status().as_u16();
    answers.push((
        "invite".into(),
        status,
        res.json().await.unwrap_or(Value::Null),
    ));
    answers
}

/// The answers of [`every_route`] with the table's id taken out.
fn without_id(answers: &[(String, u16, Value)], id: &str) -> Vec<(String, u16, String)> {
    answers
        .iter()
        .map(|(path, status, body)| {
            let text = body.to_string().replace(id, "ID");
            (path.replace(id, "ID"), *status, text)
        })
        .collect()
}

#[tokio::test]
async fn a_private_table_and_its_rematch_are_their_members_only_and_answer_as_no_table() {
    let app = spawn_app().await;
    let other = spawn_second_process(&app).await;
    let [a, b, c]: [String; 3] = players(&app, 3).await.try_into().unwrap();
    let body = json!({"ruleset": "classique", "seats": 2, "visibility": "private"});
    let table = json_of(post(&app, &a, "/v1/tables", &body).await, 201).await;
    let (id, code) = (
        id_of(&table),
        table["invite_code"].as_str().unwrap().to_owned(),
    );
    // b joins through the invitation in one process and reads through the
    // other at once.
    json_of(
        post_empty(&app, &b, &format!("/v1/invites/{code}")).await,
        200,
    )
    .await;
    json_of(get(&other, &b, &format!("/v1/tables/{id}")).await, 200).await;
    json_of(
        post_empty(&app, &a, &format!("/v1/tables/{id}/start")).await,
        200,
    )
    .await;
    // Both play, then b resigns: a rated private game.
    each_moves(&app, &[a.clone(), b.clone()], &id).await;
    json_of(
        post_empty(&app, &b, &format!("/v1/tables/{id}/resign")).await,
        200,
    )
    .await;
    // c, a stranger, is told of every route what it is told of a table that
    // does not exist.
    let nowhere = uuid::Uuid::new_v4().to_string();
    let private = every_route(&app, &c, &id).await;
    let missing = every_route(&app, &c, &nowhere).await;
    assert!(
        private.iter().all(|(_, status, _)| *status == 404),
        "{private:?}"
    );
    assert_eq!(without_id(&private, &id), without_id(&missing, &nowhere));
    // Its players and admins read it.
    json_of(get(&app, &a, &format!("/v1/tables/{id}/rounds")).await, 200).await;
    let admin = admin_token(&app).await;
    json_of(get(&app, &admin, &format!("/v1/tables/{id}")).await, 200).await;
    // Nothing public names it: the players' pages show the game, not the table.
    let name = username(&app, &a).await;
    let profile = public(&app, &format!("/v1/players/{name}")).await;
    assert_eq!(profile["stats"][0]["games"], 1, "{profile}");
    assert_eq!(profile["recent"][0]["table_id"], Value::Null);
    assert!(!profile.to_string().contains(&id));
    // Its rematch is private too: its players see it, c does not.
    let next = json_of(
        post_empty(&app, &a, &format!("/v1/tables/{id}/rematch")).await,
        200,
    )
    .await;
    let next_id = id_of(&next);
    assert_eq!(next["visibility"], "private");
    json_of(get(&other, &b, &format!("/v1/tables/{next_id}")).await, 200).await;
    for path in [
        format!("/v1/tables/{next_id}"),
        format!("/v1/tables/{next_id}/view/stream"),
    ] {
        assert_problem(get(&other, &c, &path).await, 404, "not_found").await;
    }
    let res = post_empty(&app, &c, &format!("/v1/tables/{next_id}/players")).await;
    assert_problem(res, 404, "not_found").await;
}

#[tokio::test]
async fn a_rematch_asked_again_at_once_by_one_player_gives_the_same_table_every_time() {
    let app = spawn_app().await;
    let other = spawn_second_process(&app).await;
    for opened_by_the_other in [true, false] {
        let [a, b]: [String; 2] = players(&app, 2).await.try_into().unwrap();
        let id = two_player_table(&app, &a, &b, None).await;
        json_of(
            post_empty(&app, &b, &format!("/v1/tables/{id}/abort")).await,
            200,
        )
        .await;
        let path = format!("/v1/tables/{id}/rematch");
        if opened_by_the_other {
            json_of(post_empty(&app, &b, &path).await, 200).await;
        }
        // Six at once, through two processes.
        let asks = (0..6).map(|i| {
            let (app, other, a, path) = (&app, &other, &a, &path);
            async move {
                let through = if i % 2 == 0 { app } else { other };
                json_of(post_empty(through, a, path).await, 200).await
            }
        });
        let answers = futures_util::future::join_all(asks).await;
        let ids: Vec<String> = answers.iter().map(id_of).collect();
        assert!(ids.iter().all(|i| *i == ids[0]), "{ids:?}");
        let offered = sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM events WHERE type = 'rematch_offered' AND table_id = $1::uuid",
        )
        .bind(&id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
        assert_eq!(offered, 1);
    }
}

#[tokio::test]
async fn a_paused_webhook_url_keeps_a_bounded_outbox_failing_what_passed_the_retention() {
    let receiver = Receiver::start().await;
    receiver.otherwise(410);
    let url = receiver.url.clone();
    let app = spawn_app_with(move |s| {
        s.webhook_url = Some(url);
        s.webhook_secret = Some(crate::webhooks::SECRET.parse().unwrap());
        s.webhook_retry_schedule = "100ms".parse().unwrap();
        s.feed_retention_secs = 2;
    })
    .await;
    let [a, b]: [String; 2] = players(&app, 2).await.try_into().unwrap();
    let admin = admin_token(&app).await;
    two_player_table(&app, &a, &b, None).await;
    let paused = eventually(Duration::from_secs(10), || async {
        let page = json_of(get(&app, &admin, "/v1/admin/webhooks").await, 200).await;
        (page["paused_at"].is_string() && page["pending"].as_i64() > Some(0)).then_some(page)
    })
    .await
    .expect("paused, items waiting");
    let waiting = paused["pending"].as_i64().unwrap();
    // Past the retention, what waited is failed (admins see it so), then
    // pruned: nothing waits while the URL stays paused.
    let failed = eventually(Duration::from_secs(15), || async {
        let page = json_of(
            get(&app, &admin, "/v1/admin/webhooks?status=failed").await,
            200,
        )
        .await;
        let failed = page["deliveries"].as_array().unwrap().clone();
        (!failed.is_empty()).then_some(failed)
    })
    .await
    .expect("failed past the retention");
    assert!(failed[0]["last_error"]
        .as_str()
        .unwrap()
        .contains("retention"));
    let emptied = eventually(Duration::from_secs(15), || async {
        let page = json_of(get(&app, &admin, "/v1/admin/webhooks").await, 200).await;
        let rows = count(&app, "SELECT count(*) FROM feed_items").await;
        (page["pending"] == 0 && rows == 0 && page["paused_at"].is_string()).then_some(())
    })
    .await;
    assert!(emptied.is_some(), "{waiting} waited; none is left");
}

#[tokio::test]
async fn an_account_waits_at_one_quick_play_table_of_a_ruleset_and_one_nobody_waits_at_closes() {
    let app = spawn_app().await;
    let [a, b]: [String; 2] = players(&app, 2).await.try_into().unwrap();
    let three = json!({"ruleset": "classique", "seats": 3});
    let first = id_of(&json_of(post(&app, &a, "/v1/quickplay", &three).await, 200).await);
    // Other settings of the same ruleset: a moves there; the table a left
    // alone closes.
    let two = json!({"ruleset": "classique", "seats": 3, "options": {"target": 200}});
    let second = id_of(&json_of(post(&app, &a, "/v1/quickplay", &two).await, 200).await);
    assert_ne!(second, first);
    let closed = json_of(get(&app, &b, &format!("/v1/tables/{first}")).await, 200).await;
    assert_eq!(closed["status"], "aborted");
    assert_eq!(closed["players"], json!([]));
    let res = post_empty(&app, &b, &format!("/v1/tables/{first}/players")).await;
    assert_problem(res, 409, "table_closed").await;
    // Another ruleset is another wait.
    let other = json!({"ruleset": "moderne", "seats": 3});
    json_of(post(&app, &a, "/v1/quickplay", &other).await, 200).await;
    let mine = json_of(get(&app, &a, "/v1/me/tables").await, 200).await;
    let waiting: Vec<(String, String)> = mine["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["ruleset"].as_str().unwrap().to_owned(),
                t["status"].to_string(),
            )
        })
        .collect();
    assert_eq!(waiting.len(), 2, "{waiting:?}");
    // A table another person still waits at stays open when a moves on.
    let joined = id_of(&json_of(post(&app, &b, "/v1/quickplay", &two).await, 200).await);
    assert_eq!(joined, second);
    json_of(post(&app, &a, "/v1/quickplay", &three).await, 200).await;
    let kept = json_of(get(&app, &b, &format!("/v1/tables/{second}")).await, 200).await;
    assert_eq!(kept["status"], "waiting");
    assert_eq!(kept["players"].as_array().unwrap().len(), 1);
    // Listed as waiting only while someone waits there.
    let listed = json_of(
        get(&app, &b, "/v1/tables?status=waiting&limit=100").await,
        200,
    )
    .await;
    let ids: Vec<&str> = listed["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert!(!ids.contains(&first.as_str()));
}
