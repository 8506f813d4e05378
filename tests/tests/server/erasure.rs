//! Deleting and erasing accounts (docs/API.md "Accounts"): the grace
//! period a log-in cancels, and an erasure that forgets a person
//! everywhere while every log still verifies.

use e2e::{assert_problem, spawn_app, spawn_app_with, TestApp};
use serde_json::{json, Value};

use crate::support::{
    admin_token, audit, every_read, finished_game, get, json_of, play, post, post_empty, table_of,
    view,
};

const PASSWORD: &str = "correct horse battery";

/// `DELETE /v1/me` with `body`.
pub async fn delete_me(app: &TestApp, token: &str, body: &Value) -> reqwest::Response {
    app.client
        .delete(app.url("/v1/me"))
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .expect("request sent")
}

/// A new player named `name` (with a random tail): its id, name and token.
async fn someone(app: &TestApp, name: &str) -> (String, String, String) {
    let name = format!("{name}_{}", &uuid::Uuid::new_v4().simple().to_string()[..6]);
    let account = app.register(&name, PASSWORD).await;
    let token = app.login(&name, PASSWORD).await["token"]
        .as_str()
        .unwrap()
        .to_owned();
    (account["id"].as_str().unwrap().to_owned(), name, token)
}

#[tokio::test]
async fn a_deletion_revokes_every_session_at_once_and_a_log_in_within_the_grace_period_cancels_it()
{
    let app = spawn_app().await;
    let (id, name, token) = someone(&app, "dana").await;
    let other = app.login(&name, PASSWORD).await["token"]
        .as_str()
        .unwrap()
        .to_owned();

    // The password again, and nothing else: no change on a refusal.
    assert_problem(
        delete_me(&app, &token, &json!({})).await,
        401,
        "wrong_password",
    )
    .await;
    let wrong = json!({"password": "not the password"});
    assert_problem(delete_me(&app, &token, &wrong).await, 401, "wrong_password").await;
    let extra = json!({"password": PASSWORD, "also": 1});
    assert_problem(delete_me(&app, &token, &extra).await, 422, "invalid_body").await;
    json_of(get(&app, &token, "/v1/me").await, 200).await;

    let before = chrono::Utc::now();
    let asked = json_of(
        delete_me(&app, &token, &json!({"password": PASSWORD})).await,
        202,
    )
    .await;
    let erase_at: chrono::DateTime<chrono::Utc> =
        asked["erase_at"].as_str().unwrap().parse().unwrap();
    let grace = erase_at - before;
    assert!(
        grace >= chrono::Duration::days(7) - chrono::Duration::milliseconds(1)
            && grace < chrono::Duration::days(7) + chrono::Duration::minutes(1),
        "HUIT_ERASE_GRACE_SECS is 7 days by default: {grace}"
    );
    for t in [&token, &other] {
        assert_problem(get(&app, t, "/v1/me").await, 401, "unauthorized").await;
    }

    // A log-in cancels it, and says so; the old tokens stay revoked.
    let session = app.login(&name, PASSWORD).await;
    assert_eq!(session["deletion_cancelled"], true, "{session}");
    for t in [&token, &other] {
        assert_problem(get(&app, t, "/v1/me").await, 401, "unauthorized").await;
    }
    let pending: Option<chrono::DateTime<chrono::Utc>> =
        sqlx::query_scalar("SELECT erase_at FROM accounts WHERE id = $1::uuid")
            .bind(&id)
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!(pending, None, "nothing is due any more");
    let again = app.login(&name, PASSWORD).await;
    assert_eq!(again["deletion_cancelled"], false);
}

#[tokio::test]
async fn a_deletion_is_erased_when_its_grace_period_ends_and_a_guest_deletes_without_a_password() {
    let app = spawn_app_with(|s| {
        s.erase_grace_secs = 1;
        s.erase_poll_ms = 100;
    })
    .await;
    let (id, name, token) = someone(&app, "erin").await;
    json_of(
        delete_me(&app, &token, &json!({"password": PASSWORD})).await,
        202,
    )
    .await;
    let erased = e2e::eventually(std::time::Duration::from_secs(20), || async {
        let at: Option<chrono::DateTime<chrono::Utc>> =
            sqlx::query_scalar("SELECT erased_at FROM accounts WHERE id = $1::uuid")
                .bind(&id)
                .fetch_one(&app.pool)
                .await
                .unwrap();
        at
    })
    .await;
    assert!(erased.is_some(), "the eraser erased it once due");
    let res = app
        .post_json(
            "/v1/sessions",
            &json!({"username": name, "password": PASSWORD}),
        )
        .await;
    assert_problem(res, 401, "invalid_credentials").await;

    // A guest has no password to give.
    let guest = json_of(app.post_json("/v1/guests", &json!({})).await, 201).await;
    let guest_token = guest["token"].as_str().unwrap();
    json_of(delete_me(&app, guest_token, &json!({})).await, 202).await;
    assert_problem(get(&app, guest_token, "/v1/me").await, 401, "unauthorized").await;
}

/// Every event of a table's log, as an admin exports it.
async fn log_of(app: &TestApp, admin: &str, id: &str) -> Vec<Value> {
    let text = get(app, admin, &format!("/v1/tables/{id}/log"))
        .await
        .text()
        .await
        .unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A table's summary seat `seat`.
async fn seat_of(app: &TestApp, token: &str, id: &str, seat: u64) -> Value {
    let summary = json_of(get(app, token, &format!("/v1/tables/{id}")).await, 200).await;
    summary["players"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["seat"] == seat)
        .cloned()
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn an_erased_account_is_forgotten_everywhere_while_every_log_verifies_and_every_result_stands(
) {
    let app = spawn_app_with(|s| s.bot_delay_ms = 0).await;
    let admin = admin_token(&app).await;
    let (victim_id, victim, v) = someone(&app, "victor").await;
    let (_, opponent, p1) = someone(&app, "olga").await;
    let (_, _, p2) = someone(&app, "paul").await;

    // Finished, rated: victor and olga each move, then olga resigns.
    let finished = finished_game(&app, &v, &p1).await;
    let dispute = json!({"round": 1, "reason": "victor thinks a card was miscounted"});
    let filed = post(
        &app,
        &v,
        &format!("/v1/tables/{finished}/disputes"),
        &dispute,
    )
    .await;
    json_of(filed, 201).await;
    // Aborted: victor opens, olga joins, victor aborts before any move.
    let aborted = table_of(&app, &[&v, &p1], 2, true).await;
    json_of(
        post_empty(&app, &v, &format!("/v1/tables/{aborted}/abort")).await,
        200,
    )
    .await;
    // Running, three seats: it goes on without victor.
    let running = table_of(&app, &[&p1, &v, &p2], 3, true).await;
    // Waiting: olga's, victor at seat 1.
    let waiting = table_of(&app, &[&p1, &v], 3, false).await;

    let all = [&finished[..], &aborted[..], &running[..], &waiting[..]];
    let logs_before: Vec<Vec<Value>> = {
        let mut logs = Vec::new();
        for id in all {
            logs.push(log_of(&app, &admin, id).await);
        }
        logs
    };
    let olga_before = json_of(
        get(&app, &p1, &format!("/v1/players/{opponent}")).await,
        200,
    )
    .await;
    let victor_before = json_of(get(&app, &p1, &format!("/v1/players/{victim}")).await, 200).await;
    assert_eq!(victor_before["stats"][0]["games"], 1, "victor's rated game");
    // Before: the name is there to find (the scan below can fail).
    let seen = every_read(&app, &p1, &admin, &all).await;
    assert!(
        seen.iter().any(|(_, text)| text.contains(&victim)),
        "victor's name shows before the erasure"
    );

    // An admin erases victor: recorded, and at once.
    let not_admin = get(&app, &p1, "/v1/me").await;
    assert_eq!(not_admin.status(), 200);
    let forbidden = app
        .client
        .delete(app.url(&format!("/v1/admin/accounts/{victim_id}")))
        .bearer_auth(&p1)
        .send()
        .await
        .unwrap();
    assert_problem(forbidden, 403, "forbidden").await;
    let erase = |id: String| {
        let (app, admin) = (&app, &admin);
        async move {
            app.client
                .delete(app.url(&format!("/v1/admin/accounts/{id}")))
                .bearer_auth(admin)
                .send()
                .await
                .unwrap()
        }
    };
    assert_eq!(erase(victim_id.clone()).await.status(), 204);
    assert_problem(erase(victim_id.clone()).await, 404, "not_found").await;
    assert_problem(erase("not-a-uuid".into()).await, 404, "not_found").await;
    let recorded: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM admin_actions WHERE action = 'erase_account' AND account_id = $1::uuid",
    )
    .bind(&victim_id)
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!(recorded, 1);

    // Gone: its sessions, its page, its statistics; the name is free.
    assert_problem(get(&app, &v, "/v1/me").await, 401, "unauthorized").await;
    assert_problem(
        get(&app, &p1, &format!("/v1/players/{victim}")).await,
        404,
        "not_found",
    )
    .await;
    for (what, sql) in [
        ("sessions", "SELECT count(*) FROM sessions WHERE account_id = $1::uuid"),
        ("feed", "SELECT count(*) FROM feed_items WHERE account_id = $1::uuid"),
        ("devices", "SELECT count(*) FROM devices WHERE account_id = $1::uuid"),
        ("ratings", "SELECT count(*) FROM ratings WHERE account_id = $1::uuid"),
        (
            "name",
            "SELECT count(*) FROM accounts WHERE id = $1::uuid AND (username IS NOT NULL OR password_hash IS NOT NULL)",
        ),
    ] {
        let left: i64 = sqlx::query_scalar(sql)
            .bind(&victim_id)
            .fetch_one(&app.pool)
            .await
            .unwrap();
        assert_eq!(left, 0, "{what}");
    }
    let newcomer = app.player_token(&victim).await;

    // Every seat of victor's shows an erased player.
    let erased = json!({"account_id": null, "username": null, "erased": true, "bot": null});
    for (id, seat) in [(&finished, 0), (&aborted, 0), (&running, 1)] {
        let shown = seat_of(&app, &p1, id, seat).await;
        for (k, want) in erased.as_object().unwrap() {
            assert_eq!(&shown[k], want, "{id} seat {seat}: {shown}");
        }
    }
    assert_eq!(
        seat_of(&app, &p1, &waiting, 1).await,
        Value::Null,
        "its waiting seat is free"
    );
    let running_view = view(&app, &p1, &running).await;
    assert_eq!(
        running_view["status"], "playing",
        "the running game goes on"
    );
    assert_eq!(running_view["players"][1]["erased"], true);
    assert_eq!(
        running_view["players"][1]["resigned"], true,
        "its seat resigned"
    );

    // No answer holds the name: not the summaries, views, events, rounds,
    // replays, logs, audits, disputes, lists, feed or export; and the
    // newcomer who took the name is in none of the old games.
    let newcomer_me = json_of(get(&app, &newcomer, "/v1/me").await, 200).await;
    let newcomer_id = newcomer_me["id"].as_str().unwrap().to_owned();
    for (what, text) in every_read(&app, &p1, &admin, &all).await {
        assert!(
            !text.to_lowercase().contains(&victim.to_lowercase()),
            "{what}: {text}"
        );
        assert!(!text.contains(&newcomer_id), "{what} shows the newcomer");
    }
    let filed = json_of(get(&app, &admin, "/v1/admin/disputes").await, 200).await;
    assert_eq!(filed["disputes"][0]["filed_by"], Value::Null);

    // Every log verifies, no hash changed, and no event holds the name.
    for (id, before) in all.iter().zip(&logs_before) {
        let after = log_of(&app, &admin, id).await;
        assert!(after.len() >= before.len());
        for (b, a) in before.iter().zip(&after) {
            assert_eq!(b["hash"], a["hash"], "{id} seq {}", b["seq"]);
            assert_eq!(b["data"], a["data"]);
        }
        for e in &after {
            assert_eq!(e["hash"], e2e::hash_of(e, &e["data"]), "{id}: {e}");
        }
        let report = audit(&app, id).await;
        assert_eq!(report["chain_valid"], true, "{id}: {report}");
        assert_eq!(report["ok"], true, "{id}: {report}");
    }

    // Olga's results and rating do not move; the ratings still rebuild
    // from the logs to the stored values.
    let olga_after = json_of(
        get(&app, &p1, &format!("/v1/players/{opponent}")).await,
        200,
    )
    .await;
    assert_eq!(olga_before["stats"], olga_after["stats"]);
    assert_eq!(olga_before["recent"], olga_after["recent"]);
    let rebuilt = api::ratings::rebuild(&app.pool, false, |_| {})
        .await
        .unwrap();
    assert_eq!(rebuilt.different, 0, "{:?}", rebuilt.differences);

    // The running table is played on by its people.
    let mine = view(&app, &p1, &running).await;
    if mine["current_seat"] == 0 {
        let mv = &mine["legal_moves"][0];
        json_of(
            play(&app, &p1, &running, mv, mine["version"].as_i64()).await,
            200,
        )
        .await;
    }
}

#[tokio::test]
async fn deleting_with_no_grace_period_erases_at_once_and_a_name_taken_again_is_not_the_old_player()
{
    let app = spawn_app_with(|s| s.erase_grace_secs = 0).await;
    let (_, name, token) = someone(&app, "fay").await;
    let (_, _, other) = someone(&app, "gil").await;
    let table = table_of(&app, &[&token, &other], 2, true).await;
    json_of(
        delete_me(&app, &token, &json!({"password": PASSWORD})).await,
        202,
    )
    .await;
    // Resigned at once: two seats, so the game is over, won by gil.
    let v = view(&app, &other, &table).await;
    assert_eq!(v["status"], "finished");
    assert_eq!(v["players"][0]["erased"], true);
    let newcomer = app.player_token(&name).await;
    let shown = json_of(
        get(&app, &newcomer, &format!("/v1/tables/{table}")).await,
        200,
    )
    .await;
    assert!(!shown.to_string().contains(&name), "{shown}");
    assert_problem(
        app.post_json(
            "/v1/sessions",
            &json!({"username": name, "password": "nope nope"}),
        )
        .await,
        401,
        "invalid_credentials",
    )
    .await;
}

/// An account is never deleted, erased or not (migration 21): the feed's
/// items name their accounts without a foreign key, which this rule of the
/// database stands in for.
#[tokio::test]
async fn an_erased_account_keeps_its_row_and_no_account_can_be_deleted() {
    let app = spawn_app_with(|s| s.erase_grace_secs = 0).await;
    let (id, _, token) = someone(&app, "hal").await;
    json_of(
        delete_me(&app, &token, &json!({"password": PASSWORD})).await,
        202,
    )
    .await;
    let id: uuid::Uuid = id.parse().unwrap();
    let erased: bool =
        sqlx::query_scalar("SELECT erased_at IS NOT NULL FROM accounts WHERE id = $1")
            .bind(id)
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert!(erased, "erased in place");
    let deleted = sqlx::query("DELETE FROM accounts WHERE id = $1")
        .bind(id)
        .execute(&app.pool)
        .await;
    let truncated = sqlx::query("TRUNCATE accounts CASCADE")
        .execute(&app.pool)
        .await;
    for (sql, done) in [("DELETE", deleted), ("TRUNCATE", truncated)] {
        let err = done.unwrap_err();
        assert!(err.to_string().contains("never deleted"), "{sql}: {err}");
    }
    let accounts: i64 = sqlx::query_scalar("SELECT count(*) FROM accounts WHERE id = $1")
        .bind(id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(accounts, 1);
}

#[tokio::test]
async fn a_rematch_that_keeps_a_seat_for_an_erased_person_is_closed_not_left_waiting() {
    let app = spawn_app_with(|s| s.erase_grace_secs = 0).await;
    let (_, _, hana) = someone(&app, "hana").await;
    let (_, _, ivo) = someone(&app, "ivo").await;
    let old = table_of(&app, &[&hana, &ivo], 2, true).await;
    json_of(
        post_empty(&app, &ivo, &format!("/v1/tables/{old}/resign")).await,
        200,
    )
    .await;
    let rematch = json_of(
        post_empty(&app, &ivo, &format!("/v1/tables/{old}/rematch")).await,
        200,
    )
    .await;
    let next = rematch["id"].as_str().unwrap().to_owned();
    assert_eq!(rematch["status"], "waiting", "it waits for hana");

    json_of(
        delete_me(&app, &hana, &json!({"password": PASSWORD})).await,
        202,
    )
    .await;
    let closed = json_of(get(&app, &ivo, &format!("/v1/tables/{next}")).await, 200).await;
    assert_eq!(
        closed["status"], "aborted",
        "closed, not waiting for ever: {closed}"
    );
    let events = crate::support::all_events(&app, &ivo, &next).await;
    let n = events.len();
    assert_eq!(events[n - 2]["type"], "rematch_declined");
    assert_eq!(events[n - 2]["data"]["seat"], 0);
    // Closed, its seed is revealed (docs/API.md "Fair deals").
    assert_eq!(events[n - 1]["type"], "seed_revealed");
}
