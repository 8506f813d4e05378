//! What a player does with their own account (docs/API.md "Accounts"):
//! play as a guest and upgrade, change their password, see and revoke
//! their sessions, download their data; and the logs written before event
//! format 3, rewritten once without names.

use e2e::{assert_problem, spawn_app, spawn_app_with, TestApp};
use serde_json::{json, Value};

use crate::support::{
    admin_token, audit, delete, finished_game, get, json_of, post, spawn_second_process,
};

const PASSWORD: &str = "correct horse battery";

async fn guest(app: &TestApp) -> Value {
    json_of(app.post_json("/v1/guests", &json!({})).await, 201).await
}

/// A table's view through the session cache of the hot paths: 404 for a
/// valid session (no such table), 401 once it is revoked.
const NOWHERE: &str = "/v1/tables/00000000-0000-0000-0000-000000000000/view";

/// Whether `token` is refused by `app` within a second: well within the
/// 2 s a cached session was trusted before accounts announced their
/// changes (the request before it cached the session just now).
async fn revoked_soon(app: &TestApp, token: &str) -> bool {
    let refused = e2e::eventually(std::time::Duration::from_secs(1), || async {
        let res = get(app, token, NOWHERE).await;
        (res.status() == 401).then_some(())
    })
    .await;
    refused.is_some()
}

fn token_of(session: &Value) -> String {
    session["token"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn guests_play_unrated_games_and_upgrade_keeping_their_account_and_tables() {
    let app = spawn_app_with(|s| s.guests_per_minute = 3).await;
    let session = guest(&app).await;
    let account = &session["account"];
    assert_eq!(account["role"], "guest");
    let name = account["username"].as_str().unwrap().to_owned();
    assert!(name.starts_with("guest-") && name.len() == 16, "{name}");
    let g = token_of(&session);
    let me = json_of(get(&app, &g, "/v1/me").await, 200).await;
    assert_eq!(me["id"], account["id"]);

    // A guest's game with a player is played, and rated for nobody.
    let p = app.player_token("pia").await;
    let table = finished_game(&app, &g, &p).await;
    let pia = json_of(get(&app, &p, "/v1/players/pia").await, 200).await;
    assert_eq!(pia["stats"], json!([]), "unrated for the player too: {pia}");
    let log = get(&app, &g, &format!("/v1/tables/{table}/log"))
        .await
        .text()
        .await
        .unwrap();
    assert!(
        log.contains(r#""guest":true"#),
        "the log says whose seat was a guest's"
    );

    // Upgraded: the same account, its tables, a name and password of its own.
    let taken = json!({"username": "pia", "password": PASSWORD});
    assert_problem(
        post(&app, &g, "/v1/me/upgrade", &taken).await,
        409,
        "username_taken",
    )
    .await;
    let reserved = json!({"username": "guest-mine", "password": PASSWORD});
    assert_problem(
        post(&app, &g, "/v1/me/upgrade", &reserved).await,
        422,
        "invalid_username",
    )
    .await;
    let short = json!({"username": "quinn", "password": "short"});
    assert_problem(
        post(&app, &g, "/v1/me/upgrade", &short).await,
        422,
        "invalid_password",
    )
    .await;
    let wanted = json!({"username": "quinn", "password": PASSWORD});
    let upgraded = json_of(post(&app, &g, "/v1/me/upgrade", &wanted).await, 200).await;
    assert_eq!(upgraded["id"], account["id"]);
    assert_eq!(upgraded["role"], "player");
    assert_eq!(upgraded["username"], "quinn");
    assert_problem(
        post(&app, &g, "/v1/me/upgrade", &wanted).await,
        409,
        "not_a_guest",
    )
    .await;
    assert_problem(
        post(&app, &p, "/v1/me/upgrade", &wanted).await,
        409,
        "not_a_guest",
    )
    .await;
    let summary = json_of(get(&app, &p, &format!("/v1/tables/{table}")).await, 200).await;
    assert_eq!(
        summary["players"][0]["username"], "quinn",
        "shown under its new name"
    );
    app.login("quinn", PASSWORD).await;
    // Its game as a guest stays unrated (the log says so).
    let rebuilt = api::ratings::rebuild(&app.pool, false, |_| {})
        .await
        .unwrap();
    assert_eq!((rebuilt.games, rebuilt.different), (0, 0));

    // Nobody registers a guest's name; guests per address are limited.
    let res = app
        .post_json(
            "/v1/accounts",
            &json!({"username": "Guest-x", "password": PASSWORD}),
        )
        .await;
    assert_problem(res, 422, "invalid_username").await;
    guest(&app).await;
    guest(&app).await;
    assert_problem(
        app.post_json("/v1/guests", &json!({})).await,
        429,
        "too_many_requests",
    )
    .await;
}

#[tokio::test]
async fn a_guest_unused_for_its_idle_time_is_erased() {
    let app = spawn_app_with(|s| {
        s.guest_idle_secs = 1;
        s.erase_poll_ms = 100;
    })
    .await;
    let session = guest(&app).await;
    let id = session["account"]["id"].as_str().unwrap().to_owned();
    let expires: chrono::DateTime<chrono::Utc> =
        session["expires_at"].as_str().unwrap().parse().unwrap();
    assert!(expires - chrono::Utc::now() <= chrono::Duration::seconds(1));
    let player = app.player_token("rex").await;
    let erased = e2e::eventually(std::time::Duration::from_secs(20), || async {
        sqlx::query_scalar::<_, Option<chrono::DateTime<chrono::Utc>>>(
            "SELECT erased_at FROM accounts WHERE id = $1::uuid",
        )
        .bind(&id)
        .fetch_one(&app.pool)
        .await
        .unwrap()
    })
    .await;
    assert!(erased.is_some(), "the idle guest is erased");
    json_of(get(&app, &player, "/v1/me").await, 200).await;
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM accounts WHERE erased_at IS NOT NULL")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(left, 1, "a player is not a guest");
}

#[tokio::test]
async fn a_changed_password_revokes_the_other_sessions_at_once_in_every_process() {
    let app = spawn_app().await;
    let second = spawn_second_process(&app).await;
    let mine = app.player_token("sam").await;
    let phone = token_of(&app.login("sam", PASSWORD).await);
    // The phone's session is in use (and cached) on the other process.
    json_of(get(&second, &phone, NOWHERE).await, 404).await;
    let body = |current: &str, new: &str| json!({"current_password": current, "new_password": new});
    let wrong = body("not it at all", "a new password");
    assert_problem(
        post(&app, &mine, "/v1/me/password", &wrong).await,
        401,
        "wrong_password",
    )
    .await;
    let weak = body(PASSWORD, "short");
    assert_problem(
        post(&app, &mine, "/v1/me/password", &weak).await,
        422,
        "invalid_password",
    )
    .await;
    json_of(get(&second, &phone, "/v1/me").await, 200).await;

    let res = post(
        &app,
        &mine,
        "/v1/me/password",
        &body(PASSWORD, "a new password"),
    )
    .await;
    assert_eq!(res.status(), 204);
    // The other process hears it as the change commits, and forgets the
    // session it had cached for 2 s (`SESSION_CACHE_TTL`) at once.
    assert!(
        revoked_soon(&second, &phone).await,
        "revoked in the other process"
    );
    json_of(get(&app, &mine, "/v1/me").await, 200).await;
    let old = app
        .post_json(
            "/v1/sessions",
            &json!({"username": "sam", "password": PASSWORD}),
        )
        .await;
    assert_problem(old, 401, "invalid_credentials").await;
    app.login("sam", "a new password").await;

    // A guest has no password to change.
    let g = token_of(&guest(&app).await);
    let res = post(&app, &g, "/v1/me/password", &body("", "a new password")).await;
    assert_problem(res, 403, "forbidden").await;
}

#[tokio::test]
async fn a_player_sees_their_sessions_and_revokes_one_at_once_in_every_process() {
    let app = spawn_app().await;
    let second = spawn_second_process(&app).await;
    let laptop = app.player_token("tess").await;
    let phone = app
        .client
        .post(app.url("/v1/sessions"))
        .header("User-Agent", "HuitApp/2.1 (Pixel 9)")
        .json(&json!({"username": "tess", "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    let phone = token_of(&json_of(phone, 201).await);
    let listed = json_of(get(&app, &laptop, "/v1/me/sessions").await, 200).await;
    let sessions = listed["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2, "{listed}");
    let current: Vec<&Value> = sessions.iter().filter(|s| s["current"] == true).collect();
    assert_eq!(current.len(), 1);
    let other = sessions.iter().find(|s| s["current"] == false).unwrap();
    assert_eq!(other["user_agent"], "HuitApp/2.1 (Pixel 9)");
    for key in ["id", "created_at", "last_used_at", "expires_at"] {
        assert!(other[key].is_string(), "{key}: {other}");
    }
    let other_id = other["id"].as_str().unwrap();

    json_of(get(&second, &phone, NOWHERE).await, 404).await;
    let path = format!("/v1/me/sessions/{other_id}");
    assert_eq!(delete(&app, &laptop, &path).await.status(), 204);
    assert!(
        revoked_soon(&second, &phone).await,
        "revoked in the other process"
    );
    assert_problem(delete(&app, &laptop, &path).await, 404, "not_found").await;
    assert_problem(
        delete(&app, &laptop, "/v1/me/sessions/nope").await,
        404,
        "not_found",
    )
    .await;
    // Another account's session is not the caller's to revoke.
    let ursula = app.player_token("ursula").await;
    let hers = json_of(get(&app, &ursula, "/v1/me/sessions").await, 200).await;
    let hers = format!(
        "/v1/me/sessions/{}",
        hers["sessions"][0]["id"].as_str().unwrap()
    );
    assert_problem(delete(&app, &laptop, &hers).await, 404, "not_found").await;
    json_of(get(&app, &ursula, "/v1/me").await, 200).await;
}

#[tokio::test]
async fn a_player_downloads_their_data_as_one_document() {
    let app = spawn_app().await;
    let v = app.player_token("vera").await;
    let w = app.player_token("walt").await;
    let table = finished_game(&app, &v, &w).await;
    let dispute = json!({"round": 1, "reason": "a question about round 1"});
    json_of(
        post(&app, &v, &format!("/v1/tables/{table}/disputes"), &dispute).await,
        201,
    )
    .await;

    let res = get(&app, &v, "/v1/me/export").await;
    assert!(res.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .starts_with("attachment"));
    let export = json_of(res, 200).await;
    let keys: Vec<&str> = export
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for key in [
        "account", "sessions", "tables", "stats", "results", "disputes", "feed", "devices",
    ] {
        assert!(keys.contains(&key), "{key} in {keys:?}");
    }
    assert_eq!(export["account"]["username"], "vera");
    assert_eq!(export["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(export["tables"][0]["id"], table.as_str());
    assert_eq!(export["stats"][0]["games"], 1);
    assert_eq!(export["results"][0]["place"], 1);
    assert_eq!(export["disputes"][0]["reason"], "a question about round 1");
    assert!(!export["feed"].as_array().unwrap().is_empty(), "{export}");
    for _ in 1..6 {
        json_of(get(&app, &v, "/v1/me/export").await, 200).await;
    }
    assert_problem(
        get(&app, &v, "/v1/me/export").await,
        429,
        "too_many_requests",
    )
    .await;
}

#[tokio::test]
async fn a_log_written_with_names_is_rewritten_once_without_them_and_still_verifies() {
    let app = spawn_app().await;
    let admin = admin_token(&app).await;
    let x = app.player_token("xena").await;
    let y = app.player_token("yann").await;
    let table = finished_game(&app, &x, &y).await;

    // The same log as a server of event format 2 wrote it, names inside,
    // chained: a table of its own.
    let text = get(&app, &admin, &format!("/v1/tables/{table}/log"))
        .await
        .text()
        .await
        .unwrap();
    let log: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let name = |id: &Value| -> &str {
        if id == &json!(log[1]["data"]["account_id"]) {
            "xena"
        } else {
            "yann"
        }
    };
    let old = uuid::Uuid::new_v4();
    sqlx::query(
        "INSERT INTO game_tables (id, ruleset, status, version, created_by, seats)
         SELECT $1, ruleset, status, version, created_by, seats FROM game_tables WHERE id = $2::uuid",
    )
    .bind(old)
    .bind(&table)
    .execute(&app.pool)
    .await
    .unwrap();
    let mut prev = store::chain::GENESIS_PREV_HASH.to_owned();
    for e in &log {
        let mut data = e["data"].clone();
        match e["type"].as_str().unwrap() {
            "player_joined" => data["username"] = name(&data["account_id"]).into(),
            "game_started" => {
                for p in data["players"].as_array_mut().unwrap() {
                    p["username"] = name(&p["account_id"]).into();
                }
            }
            _ => {}
        }
        let mut event = e.clone();
        event["v"] = 2.into();
        event["prev_hash"] = prev.clone().into();
        let hash = e2e::hash_of(&event, &data);
        sqlx::query(
            "INSERT INTO events (table_id, seq, type, v, at, data, prev_hash, hash)
             VALUES ($1, $2, $3, 2, $4::timestamptz, $5::json, $6, $7)",
        )
        .bind(old)
        .bind(e["seq"].as_i64().unwrap())
        .bind(e["type"].as_str().unwrap())
        .bind(e["at"].as_str().unwrap())
        .bind(data.to_string())
        .bind(&prev)
        .bind(&hash)
        .execute(&app.pool)
        .await
        .unwrap();
        prev = hash;
    }
    let named = get(&app, &admin, &format!("/v1/tables/{old}/log"))
        .await
        .text()
        .await
        .unwrap();
    assert!(named.contains("xena") && named.contains("yann"), "{named}");
    assert_eq!(audit(&app, &old.to_string()).await["chain_valid"], true);

    let rewritten = store::rechain::unname_logs(&app.pool).await.unwrap();
    assert_eq!(rewritten, 1, "the named log alone");
    assert_eq!(
        store::rechain::unname_logs(&app.pool).await.unwrap(),
        0,
        "once"
    );
    let unnamed = get(&app, &admin, &format!("/v1/tables/{old}/log"))
        .await
        .text()
        .await
        .unwrap();
    assert!(
        !unnamed.contains("xena") && !unnamed.contains("yann"),
        "{unnamed}"
    );
    let after: Vec<Value> = unnamed
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(after.len(), log.len());
    for (a, e) in after.iter().zip(&log) {
        assert_eq!(a["data"], e["data"], "nothing but the names left the data");
        assert_eq!(a["hash"], e2e::hash_of(a, &a["data"]));
    }
    let report = audit(&app, &old.to_string()).await;
    assert_eq!(report["chain_valid"], true, "{report}");
    assert!(report["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["matches"] == true));
    // The one problem: the copy's deals name the table it was copied from
    // (docs/API.md "Fair deals"), as a log moved to another id should.
    assert_eq!(report["deals"]["status"], "failed", "{report}");
    assert_eq!(report["problems"].as_array().unwrap().len(), 1, "{report}");
    // The log's table folds and shows its players by their accounts.
    let summary = json_of(get(&app, &x, &format!("/v1/tables/{old}")).await, 200).await;
    assert_eq!(summary["players"][0]["username"], "xena");
}

#[tokio::test]
async fn a_password_asked_again_is_throttled_like_log_ins() {
    let app = spawn_app_with(|s| s.login_max_failures = 3).await;
    let token = app.player_token("wanda").await;
    let change = json!({"current_password": "not it at all", "new_password": "a new password"});
    for _ in 0..3 {
        let res = post(&app, &token, "/v1/me/password", &change).await;
        assert_problem(res, 401, "wrong_password").await;
    }
    // Now even the right one waits, for a change or a deletion alike.
    let right = json!({"current_password": PASSWORD, "new_password": "a new password"});
    let res = post(&app, &token, "/v1/me/password", &right).await;
    assert!(res.headers().contains_key("retry-after"));
    assert_problem(res, 429, "too_many_requests").await;
    let deletion = app
        .client
        .delete(app.url("/v1/me"))
        .bearer_auth(&token)
        .json(&json!({"password": PASSWORD}))
        .send()
        .await
        .unwrap();
    assert_problem(deletion, 429, "too_many_requests").await;
    json_of(get(&app, &token, "/v1/me").await, 200).await;
}
