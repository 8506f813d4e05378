//! Sanctions (docs/API.md "Corrections and sanctions"), over HTTP: an
//! admin suspends or bans an account; its sessions end in every process,
//! its log-ins are refused with the sanction's end, its running seats are
//! resigned; voiding its rated games appends a `result_corrected` to each
//! game's log, and everyone's ratings equal a rebuild from the logs. Every
//! sanction, and lifting one, is an admin action.

use crate::corrections::{audit, log_of};
use crate::ratings::{play_out, profile, rebuilt_the_same};
use crate::support::{delete, get, json_of, post, seated_table, spawn_second_process, start, view};
use chrono::{Duration, SecondsFormat, Utc};
use e2e::{assert_problem, spawn_app, Cast, TestApp};
use serde_json::{json, Value};

const PASSWORD: &str = "correct horse battery";

/// A rated `moderne` game of one round between `tokens`, played out.
async fn rated_game(app: &TestApp, tokens: &[String]) -> String {
    let seated: Vec<&str> = tokens.iter().map(String::as_str).collect();
    let id = seated_table(app, &seated, "moderne", json!({"rounds": 1}), 3).await;
    start(app, &tokens[0], &id).await;
    play_out(app, tokens, &id).await;
    id
}

fn sanctions_of(account: &str) -> String {
    format!("/v1/admin/accounts/{account}/sanctions")
}

fn at(t: chrono::DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}

async fn log_in(app: &TestApp, username: &str) -> reqwest::Response {
    let body = json!({"username": username, "password": PASSWORD});
    app.post_json("/v1/sessions", &body).await
}

/// The admin actions of `kind` on the account.
async fn actions_on(app: &TestApp, account: &str, kind: &str) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM admin_actions WHERE account_id = $1::uuid AND action = $2 \
         AND sanction_id IS NOT NULL",
    )
    .bind(account)
    .bind(kind)
    .fetch_one(&app.pool)
    .await
    .unwrap()
}

#[tokio::test]
async fn a_suspension_ends_sessions_everywhere_refuses_log_ins_with_its_end_and_resigns_seats() {
    let app = spawn_app().await;
    let other = spawn_second_process(&app).await;
    let cast = Cast::new(&app, &["nora", "omar", "pia"], "quin", "rhea").await;
    let (nora, nora_id) = (&cast.tokens[0], cast.players[0].0.to_string());
    let seated: Vec<&str> = cast.tokens.iter().map(String::as_str).collect();
    let running = seated_table(&app, &seated, "moderne", json!({}), 3).await;
    start(&app, nora, &running).await;
    // Her token is known to both processes.
    json_of(get(&app, nora, "/v1/me").await, 200).await;
    json_of(get(&other, nora, "/v1/me").await, 200).await;

    let until = Utc::now() + Duration::days(3);
    let body = json!({"action": "suspend", "until": at(until), "reason": "Abusive chat"});
    let sanction = json_of(
        post(&app, &cast.admin, &sanctions_of(&nora_id), &body).await,
        201,
    )
    .await;
    assert_eq!(
        (
            &sanction["action"],
            &sanction["standing"],
            &sanction["created_by"]
        ),
        (&json!("suspend"), &json!(true), &json!("rhea"))
    );
    assert_eq!(sanction["games_voided"], 0);
    let sid = sanction["id"].as_str().unwrap().to_owned();

    // Every session ends, in every process; a log-in (the right password)
    // is refused, saying until when.
    assert_problem(get(&app, nora, "/v1/me").await, 401, "unauthorized").await;
    assert_problem(get(&other, nora, "/v1/me").await, 401, "unauthorized").await;
    let refused = assert_problem(log_in(&app, "nora").await, 403, "account_suspended").await;
    assert_eq!(refused["until"], sanction["until"], "{refused}");
    assert_problem(log_in(&app, "nora").await, 403, "account_suspended").await;
    let wrong = json!({"username": "nora", "password": "not her password"});
    assert_problem(
        app.post_json("/v1/sessions", &wrong).await,
        401,
        "invalid_credentials",
    )
    .await;

    // Her running seat is resigned; the game goes on for the others.
    let shown = view(&app, &cast.tokens[1], &running).await;
    assert_eq!(shown["status"], "playing");
    assert_eq!(shown["players"][0]["resigned"], true, "{shown:#}");
    let report = audit(&app, &cast, &running).await;
    assert_eq!(report["ok"], true, "{report:#}");

    // Lifted: she logs in again; lifting twice is refused.
    let path = format!("{}/{sid}", sanctions_of(&nora_id));
    let lifted = json_of(delete(&app, &cast.admin, &path).await, 200).await;
    assert_eq!(
        (&lifted["standing"], &lifted["lifted_by"]),
        (&json!(false), &json!("rhea"))
    );
    assert_eq!(log_in(&app, "nora").await.status(), 201);
    assert_problem(
        delete(&app, &cast.admin, &path).await,
        409,
        "already_lifted",
    )
    .await;
    assert_eq!(actions_on(&app, &nora_id, "sanction_account").await, 1);
    assert_eq!(actions_on(&app, &nora_id, "lift_sanction").await, 1);

    // The admin's page of her account lists it.
    let page = json_of(
        get(&app, &cast.admin, &format!("/v1/admin/accounts/{nora_id}")).await,
        200,
    )
    .await;
    assert_eq!(page["username"], "nora");
    assert_eq!(page["sanctions"][0]["id"], json!(sid), "{page:#}");
}

#[tokio::test]
async fn a_ban_voids_each_rated_game_since_in_its_log_and_ratings_equal_a_rebuild() {
    let app = spawn_app().await;
    let cast = Cast::new(&app, &["sami", "tess", "uma"], "vic", "wren").await;
    let sami_id = cast.players[0].0.to_string();
    let since = Utc::now() - Duration::seconds(1);
    let games = [
        rated_game(&app, &cast.tokens).await,
        rated_game(&app, &cast.tokens).await,
    ];
    assert_eq!(profile(&app, "tess").await["stats"][0]["games"], 2);
    let before: Vec<Vec<Value>> = {
        let mut logs = Vec::new();
        for id in &games {
            logs.push(log_of(&app, &cast.tokens[1], id).await);
        }
        logs
    };

    // The admin's page shows whom sami plays with, and how each placed.
    let page = json_of(
        get(&app, &cast.admin, &format!("/v1/admin/accounts/{sami_id}")).await,
        200,
    )
    .await;
    let partners = page["partners"].as_array().unwrap();
    assert_eq!(partners.len(), 2, "{page:#}");
    assert!(partners.iter().all(|p| p["games"] == 2), "{page:#}");

    let body = json!({
        "action": "ban", "reason": "Colluded with tess",
        "void_rated_games_since": at(since),
    });
    let sanction = json_of(
        post(&app, &cast.admin, &sanctions_of(&sami_id), &body).await,
        201,
    )
    .await;
    assert_eq!(sanction["until"], Value::Null);
    assert_eq!(sanction["games_voided"], 2, "{sanction:#}");
    assert!(sanction["voided_at"].is_string());
    let refused = assert_problem(log_in(&app, "sami").await, 403, "account_suspended").await;
    assert_eq!(refused["until"], Value::Null, "a ban has no end");

    // Each game's log gains a void on the sanction's grounds, chained after
    // its end; its audit recomputes it; the game counts for no one.
    for (id, before) in games.iter().zip(&before) {
        let after = log_of(&app, &cast.tokens[1], id).await;
        assert_eq!(after.len(), before.len() + 1, "{id}");
        assert_eq!(after[..before.len()], before[..]);
        let data = &after[before.len()]["data"];
        assert_eq!(
            (&data["sanction_id"], &data["correction"], &data["rated"]),
            (&sanction["id"], &json!({"kind": "void"}), &json!(false)),
            "{data:#}"
        );
        assert_eq!(data.get("dispute_id"), None);
        let report = audit(&app, &cast, id).await;
        assert_eq!(report["ok"], true, "{report:#}");
    }
    assert_eq!(rebuilt_the_same(&app).await, 0);
    assert_eq!(profile(&app, "tess").await["stats"], json!([]));
}

#[tokio::test]
async fn sanctions_that_cannot_be_are_refused_and_change_nothing() {
    let app = spawn_app().await;
    let cast = Cast::new(&app, &["xavi"], "yara", "zeno").await;
    let xavi = cast.players[0].0.to_string();
    let path = sanctions_of(&xavi);
    let soon = at(Utc::now() + Duration::days(1));
    let admin = &cast.admin;
    assert_problem(
        post(
            &app,
            &cast.outsider,
            &path,
            &json!({"action": "ban", "reason": "x"}),
        )
        .await,
        403,
        "forbidden",
    )
    .await;
    for (body, code) in [
        (
            json!({"action": "suspend", "reason": "x"}),
            "invalid_sanction",
        ),
        (
            json!({"action": "ban", "until": soon, "reason": "x"}),
            "invalid_sanction",
        ),
        (
            json!({"action": "suspend", "until": at(Utc::now() - Duration::days(1)), "reason": "x"}),
            "invalid_sanction",
        ),
        (
            json!({"action": "suspend", "until": at(Utc::now() + Duration::days(4000)), "reason": "x"}),
            "invalid_sanction",
        ),
        (json!({"action": "ban", "reason": "  "}), "invalid_sanction"),
        (
            json!({"action": "ban", "reason": "x", "void_rated_games_since": soon}),
            "invalid_sanction",
        ),
        (
            json!({"action": "ban", "reason": "x",
                   "void_rated_games_since": at(Utc::now() - Duration::days(400))}),
            "invalid_sanction",
        ),
        (json!({"action": "mute", "reason": "x"}), "invalid_body"),
        (
            json!({"action": "ban", "reason": "x", "points": 3}),
            "invalid_body",
        ),
    ] {
        assert_problem(post(&app, admin, &path, &body).await, 422, code).await;
    }
    let admin_id = json_of(get(&app, admin, "/v1/me").await, 200).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let ban = json!({"action": "ban", "reason": "x"});
    assert_problem(
        post(&app, admin, &sanctions_of(&admin_id), &ban).await,
        422,
        "invalid_sanction",
    )
    .await;
    let nobody = uuid::Uuid::new_v4();
    assert_problem(
        post(&app, admin, &sanctions_of(&nobody.to_string()), &ban).await,
        404,
        "not_found",
    )
    .await;
    assert_problem(
        delete(&app, admin, &format!("{path}/{nobody}")).await,
        404,
        "not_found",
    )
    .await;
    // Nothing changed: xavi's token still works, and no sanction is kept.
    json_of(get(&app, &cast.tokens[0], "/v1/me").await, 200).await;
    let page = json_of(
        get(&app, admin, &format!("/v1/admin/accounts/{xavi}")).await,
        200,
    )
    .await;
    assert_eq!(page["sanctions"], json!([]));
}

#[tokio::test]
async fn voids_cut_short_are_finished_by_the_erasers_pass() {
    let app = e2e::spawn_app_with(|s| s.erase_poll_ms = 100).await;
    let cast = Cast::new(&app, &["abby", "bram", "cleo"], "dion", "emil").await;
    let (abby, admin_id) = (cast.players[0].0, {
        let me = json_of(get(&app, &cast.admin, "/v1/me").await, 200).await;
        me["id"].as_str().unwrap().parse::<uuid::Uuid>().unwrap()
    });
    let since = Utc::now() - Duration::seconds(1);
    let game = rated_game(&app, &cast.tokens).await;
    // A sanction whose voids its request did not get to (the process
    // stopped after its transaction): nobody holds them.
    let sid = uuid::Uuid::new_v4();
    sqlx::query(
        "INSERT INTO sanctions (id, account_id, action, reason, void_rated_games_since, \
         created_by) VALUES ($1, $2, 'ban', 'Colluded', $3, $4)",
    )
    .bind(sid)
    .bind(abby)
    .bind(since)
    .bind(admin_id)
    .execute(&app.pool)
    .await
    .unwrap();
    let done = e2e::eventually(std::time::Duration::from_secs(20), || async {
        let voided: (Option<chrono::DateTime<Utc>>, i32) =
            sqlx::query_as("SELECT voided_at, games_voided FROM sanctions WHERE id = $1")
                .bind(sid)
                .fetch_one(&app.pool)
                .await
                .unwrap();
        voided.0.map(|_| voided.1)
    })
    .await;
    assert_eq!(done, Some(1), "the eraser's pass voided the game");
    let log = log_of(&app, &cast.tokens[1], &game).await;
    let last = log.last().unwrap();
    assert_eq!(
        (&last["type"], &last["data"]["sanction_id"]),
        (&json!("result_corrected"), &json!(sid))
    );
    assert_eq!(rebuilt_the_same(&app).await, 0);
}
