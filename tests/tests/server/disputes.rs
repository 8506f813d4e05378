//! Disputes and the record of admin actions (docs/API.md "Disputes, the
//! admin console, metrics"), over HTTP, on games generated in-process with
//! the engine and stored with the event store.

use crate::support::{get, json_of, post};
use e2e::games::{self, PlayedGame};
use e2e::{assert_problem, spawn_app, Cast, TestApp};
use serde_json::{json, Value};
use uuid::Uuid;

async fn cast(app: &TestApp) -> Cast {
    Cast::new(app, &["dora", "emil"], "fred", "judge").await
}

fn game(cast: &Cast, rounds: u32) -> PlayedGame {
    games::play_game("moderne", json!({"rounds": rounds}), &cast.players, 11)
}

/// A table whose round 1 is over and round 2 under way.
async fn round_two_running(app: &TestApp, cast: &Cast) -> String {
    let played = game(cast, 3);
    let batches = played.partway_into_round(2, 3);
    games::store_table(&app.pool, cast.players[0].0, &batches)
        .await
        .to_string()
}

/// A finished game.
async fn finished(app: &TestApp, cast: &Cast) -> String {
    let played = game(cast, 1);
    games::store_table(&app.pool, cast.players[0].0, &played.batches)
        .await
        .to_string()
}

fn disputes(id: &str) -> String {
    format!("/v1/tables/{id}/disputes")
}

/// The table's log: its version and head hash, which no dispute changes.
async fn head(app: &TestApp, id: &str) -> (i64, String) {
    let id: Uuid = id.parse().unwrap();
    let version = store::events::current_version(&app.pool, id)
        .await
        .unwrap()
        .unwrap();
    let hash = store::events::head_hash(&app.pool, id, version)
        .await
        .unwrap()
        .unwrap();
    (version, hash)
}

#[tokio::test]
async fn a_player_disputes_a_finished_round_and_reads_the_verdict() {
    let app = spawn_app().await;
    let cast = cast(&app).await;
    let id = round_two_running(&app, &cast).await;
    let before = head(&app, &id).await;
    let (dora, emil) = (&cast.tokens[0], &cast.tokens[1]);
    let reason = "My 8 was counted as 8 points, not 50";

    // What may not be disputed, and by whom.
    for (body, status, code) in [
        (json!({"round": 2, "reason": reason}), 409, "round_running"),
        (json!({"reason": reason}), 409, "round_running"),
        (
            json!({"round": 0, "reason": reason}),
            422,
            "invalid_dispute",
        ),
        (
            json!({"round": 1, "reason": " \n "}),
            422,
            "invalid_dispute",
        ),
        (
            json!({"round": 1, "reason": "x".repeat(2001)}),
            422,
            "invalid_dispute",
        ),
        (
            json!({"round": 1, "reason": reason, "urgent": true}),
            422,
            "invalid_body",
        ),
        (json!({"round": -1, "reason": reason}), 422, "invalid_body"),
        (json!({"round": 9, "reason": reason}), 404, "not_found"),
    ] {
        assert_problem(post(&app, dora, &disputes(&id), &body).await, status, code).await;
    }
    let body = json!({"round": 1, "reason": reason});
    assert_problem(
        post(&app, &cast.outsider, &disputes(&id), &body).await,
        403,
        "not_a_player",
    )
    .await;
    assert_problem(
        post(&app, dora, &disputes(&Uuid::new_v4().to_string()), &body).await,
        404,
        "not_found",
    )
    .await;

    // Nobody without a token.
    let anonymous = reqwest::Client::new();
    for (method, path) in [
        (reqwest::Method::POST, disputes(&id)),
        (reqwest::Method::GET, "/v1/me/disputes".to_owned()),
        (reqwest::Method::GET, "/v1/admin/disputes".to_owned()),
    ] {
        let res = anonymous
            .request(method, app.url(&path))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_problem(res, 401, "unauthorized").await;
    }

    // Filed, open.
    let filed = json_of(post(&app, dora, &disputes(&id), &body).await, 201).await;
    assert_eq!(filed["table_id"], json!(id));
    assert_eq!(filed["round"], 1);
    assert_eq!(filed["reason"], reason);
    assert_eq!(filed["status"], "open");
    assert_eq!(filed["filed_by"], "dora");
    assert_eq!(filed["verdict"], Value::Null);
    assert!(filed["created_at"].is_string());
    let dispute = filed["id"].as_str().unwrap().to_owned();
    let mine = json_of(get(&app, dora, "/v1/me/disputes").await, 200).await;
    assert_eq!(mine["disputes"], json!([filed]));
    let theirs = json_of(get(&app, emil, "/v1/me/disputes").await, 200).await;
    assert_eq!(theirs["disputes"], json!([]));

    // The admins' queue and the dispute with its audit.
    assert_problem(
        get(&app, dora, "/v1/admin/disputes").await,
        403,
        "forbidden",
    )
    .await;
    let queue = json_of(
        get(&app, &cast.admin, "/v1/admin/disputes?status=open").await,
        200,
    )
    .await;
    assert_eq!(queue["disputes"][0]["id"], json!(dispute));
    let resolved = json_of(
        get(&app, &cast.admin, "/v1/admin/disputes?status=resolved").await,
        200,
    )
    .await;
    assert_eq!(resolved["disputes"], json!([]));
    let one = format!("/v1/admin/disputes/{dispute}");
    assert_problem(get(&app, dora, &one).await, 403, "forbidden").await;
    for missing in [
        "/v1/admin/disputes/nope",
        &format!("/v1/admin/disputes/{}", Uuid::new_v4()),
    ] {
        assert_problem(get(&app, &cast.admin, missing).await, 404, "not_found").await;
    }
    let detail = json_of(get(&app, &cast.admin, &one).await, 200).await;
    assert_eq!(detail["id"], json!(dispute));
    assert_eq!(detail["audit"]["ok"], true, "{detail:#}");
    assert_eq!(
        detail["actions"],
        json!([{"admin": "judge", "action": "audit", "dispute_id": dispute, "at": detail["actions"][0]["at"]}])
    );

    // The resolution: admins only, a verdict and a note, once.
    let resolution = format!("/v1/admin/disputes/{dispute}/resolution");
    let verdict = json!({"verdict": "rejected", "note": "The audit recomputes the same points."});
    assert_problem(
        post(&app, dora, &resolution, &verdict).await,
        403,
        "forbidden",
    )
    .await;
    for (body, code) in [
        (
            json!({"verdict": "rejected", "note": ""}),
            "invalid_dispute",
        ),
        (json!({"verdict": "maybe", "note": "hm"}), "invalid_body"),
        (json!({"note": "hm"}), "invalid_body"),
    ] {
        assert_problem(post(&app, &cast.admin, &resolution, &body).await, 422, code).await;
    }
    let done = json_of(post(&app, &cast.admin, &resolution, &verdict).await, 200).await;
    assert_eq!(done["status"], "resolved");
    assert_eq!(done["verdict"], "rejected");
    assert_eq!(done["note"], verdict["note"]);
    assert_eq!(done["resolved_by"], "judge");
    assert!(done["resolved_at"].is_string());
    let again = json!({"verdict": "upheld", "note": "On second thought"});
    assert_problem(
        post(&app, &cast.admin, &resolution, &again).await,
        409,
        "already_resolved",
    )
    .await;
    let mine = json_of(get(&app, dora, "/v1/me/disputes").await, 200).await;
    assert_eq!(mine["disputes"], json!([done]));

    // The log is untouched; the actions are all there.
    assert_eq!(head(&app, &id).await, before);
    let detail = json_of(get(&app, &cast.admin, &one).await, 200).await;
    let actions: Vec<&str> = detail["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["audit", "resolve_dispute", "audit"]);
}

#[tokio::test]
async fn a_finished_game_may_be_disputed_whole_and_a_player_has_at_most_three_open() {
    let app = spawn_app().await;
    let cast = cast(&app).await;
    let id = finished(&app, &cast).await;
    let emil = &cast.tokens[1];
    let whole = json!({"reason": "The ranking is wrong"});
    let mut filed = Vec::new();
    for _ in 0..3 {
        let d = json_of(post(&app, emil, &disputes(&id), &whole).await, 201).await;
        assert_eq!(d["round"], Value::Null);
        filed.push(d["id"].as_str().unwrap().to_owned());
    }
    assert_problem(
        post(&app, emil, &disputes(&id), &whole).await,
        429,
        "too_many_requests",
    )
    .await;
    // The other player is not held back by emil's.
    json_of(
        post(&app, &cast.tokens[0], &disputes(&id), &whole).await,
        201,
    )
    .await;
    // One resolved, one more may be filed.
    let resolution = format!("/v1/admin/disputes/{}/resolution", filed[0]);
    let verdict = json!({"verdict": "upheld", "note": "Right: see the audit"});
    json_of(post(&app, &cast.admin, &resolution, &verdict).await, 200).await;
    json_of(post(&app, emil, &disputes(&id), &whole).await, 201).await;

    // Pages of the queue, oldest first, by cursor.
    let page = json_of(
        get(&app, &cast.admin, "/v1/admin/disputes?status=open&limit=2").await,
        200,
    )
    .await;
    assert_eq!(page["disputes"].as_array().unwrap().len(), 2);
    assert_eq!(page["disputes"][0]["id"], json!(filed[1]));
    let next = page["next"].as_str().expect("a next page");
    let rest = json_of(
        get(
            &app,
            &cast.admin,
            &format!("/v1/admin/disputes?status=open&limit=2&after={next}"),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(rest["disputes"].as_array().unwrap().len(), 2);
    assert_eq!(rest["next"], Value::Null);
    for query in ["limit=0", "limit=101", "after=xyz", "status=closed"] {
        assert_problem(
            get(&app, &cast.admin, &format!("/v1/admin/disputes?{query}")).await,
            400,
            "invalid_query",
        )
        .await;
    }
}

#[tokio::test]
async fn what_admins_read_is_recorded_and_the_record_is_append_only() {
    let app = spawn_app().await;
    let cast = cast(&app).await;
    let id = round_two_running(&app, &cast).await;
    let admin = &cast.admin;
    // A player reading a finished round is no admin action.
    let replay = |n: u32| format!("/v1/tables/{id}/rounds/{n}/replay");
    json_of(get(&app, &cast.tokens[0], &replay(1)).await, 200).await;
    // An admin reading the running round, exporting the log, auditing.
    json_of(get(&app, admin, &replay(1)).await, 200).await;
    json_of(get(&app, admin, &replay(2)).await, 200).await;
    let log = get(&app, admin, &format!("/v1/tables/{id}/log")).await;
    assert_eq!(log.status(), 200);
    log.text().await.unwrap();
    json_of(
        get(&app, admin, &format!("/v1/admin/tables/{id}/audit")).await,
        200,
    )
    .await;
    let body = json!({"round": 1, "reason": "Check it"});
    let filed = json_of(
        post(&app, &cast.tokens[1], &disputes(&id), &body).await,
        201,
    )
    .await;
    let detail = json_of(
        get(
            &app,
            admin,
            &format!("/v1/admin/disputes/{}", filed["id"].as_str().unwrap()),
        )
        .await,
        200,
    )
    .await;
    let actions: Vec<(&str, &Value)> = detail["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["action"].as_str().unwrap(), &a["dispute_id"]))
        .collect();
    assert_eq!(
        actions,
        [
            ("replay_running_round", &Value::Null),
            ("export_log", &Value::Null),
            ("audit", &Value::Null),
            ("audit", &filed["id"]),
        ]
    );
    for change in [
        "UPDATE admin_actions SET action = 'audit'",
        "DELETE FROM admin_actions",
        "TRUNCATE admin_actions",
    ] {
        let refused = sqlx::query(change).execute(&app.pool).await;
        assert!(refused.is_err(), "{change} is refused");
    }
}

#[tokio::test]
async fn the_console_and_the_replay_pages_are_served_from_the_binary_without_a_token() {
    let app = spawn_app().await;
    let client = reqwest::Client::new();
    for (path, kind, holds) in [
        ("/admin", "text/html", "/admin/console.js"),
        ("/admin/", "text/html", "/admin/console.js"),
        ("/admin/console.js", "text/javascript", "function route()"),
        ("/admin/console.css", "text/css", ".card"),
        (
            "/replay/6f1c2a5e-2b7d-4c1e-9a53-0d4f8b2e7c11/1",
            "text/html",
            "/admin/console.js",
        ),
        ("/favicon.ico", "image/svg+xml", "<svg"),
        ("/favicon.svg", "image/svg+xml", "<svg"),
    ] {
        let res = client.get(app.url(path)).send().await.unwrap();
        assert_eq!(res.status(), 200, "{path}");
        let headers = res.headers().clone();
        assert!(
            headers["content-type"].to_str().unwrap().starts_with(kind),
            "{path}"
        );
        let policy = headers["content-security-policy"].to_str().unwrap();
        assert!(policy.contains("script-src 'self'"), "{path}: {policy}");
        assert!(
            policy.contains("frame-ancestors 'none'"),
            "{path}: {policy}"
        );
        assert_eq!(headers["x-content-type-options"], "nosniff");
        assert!(res.text().await.unwrap().contains(holds), "{path}");
    }
    // The interactive documentation (and every answer) is not framed nor
    // sniffed either.
    for path in ["/docs/", "/docs", "/openapi.json", "/v1/rulesets"] {
        let res = client.get(app.url(path)).send().await.unwrap();
        let headers = res.headers();
        assert_eq!(headers["x-content-type-options"], "nosniff", "{path}");
        let policy = headers["content-security-policy"].to_str().unwrap();
        assert!(
            policy.contains("frame-ancestors 'none'"),
            "{path}: {policy}"
        );
    }
    // Only GET; the pages are not part of the API document.
    let res = client.post(app.url("/admin")).send().await.unwrap();
    assert_eq!(res.status(), 405);
    let doc: Value = client
        .get(app.url("/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(doc["paths"].get("/admin").is_none());
}

#[tokio::test]
async fn control_characters_in_a_reason_or_a_note_are_422_and_no_text_anywhere_is_a_500() {
    let app = spawn_app().await;
    let cast = cast(&app).await;
    let id = finished(&app, &cast).await;
    let dora = &cast.tokens[0];
    for reason in ["nul \u{0} inside", "\u{0}", "bell \u{7}"] {
        let body = json!({"round": 1, "reason": reason});
        assert_problem(
            post(&app, dora, &disputes(&id), &body).await,
            422,
            "invalid_dispute",
        )
        .await;
    }
    // Tabs and line breaks are text.
    let body = json!({"round": 1, "reason": "Round 1:\n\tmy 8 was counted as 8"});
    let filed = json_of(post(&app, dora, &disputes(&id), &body).await, 201).await;
    let resolution = format!(
        "/v1/admin/disputes/{}/resolution",
        filed["id"].as_str().unwrap()
    );
    let body = json!({"verdict": "rejected", "note": "no\u{0}"});
    assert_problem(
        post(&app, &cast.admin, &resolution, &body).await,
        422,
        "invalid_dispute",
    )
    .await;

    // Every other text a client sends, with a NUL in it: a 4xx, never a 500.
    let nul = "a\u{0}b";
    let anonymous = [
        (
            "/v1/accounts",
            json!({"username": nul, "password": "correct horse battery"}),
        ),
        (
            "/v1/accounts",
            json!({"username": "nulpass", "password": format!("correct horse{nul}")}),
        ),
        (
            "/v1/sessions",
            json!({"username": nul, "password": "correct horse battery"}),
        ),
        ("/v1/sessions", json!({"username": "dora", "password": nul})),
    ];
    for (path, body) in anonymous {
        let status = app.post_json(path, &body).await.status();
        assert!(status.as_u16() < 500, "{path} {body}: {status}");
    }
    let as_dora = [
        ("/v1/tables", json!({"ruleset": nul, "seats": 2})),
        (
            "/v1/tables",
            json!({"ruleset": "classique", "seats": 2, "options": {nul: 1}}),
        ),
        (
            "/v1/tables",
            json!({"ruleset": "classique", "seats": 2, "options": {"deck": nul}}),
        ),
        (
            "/v1/tables",
            json!({"ruleset": "classique", "seats": 2, "bots": [{"level": nul}]}),
        ),
        (
            &format!("/v1/tables/{id}/moves") as &str,
            json!({"move": {"type": "play", "card": nul}}),
        ),
        (&disputes(&id), json!({"round": 1, "reason": nul})),
    ];
    for (path, body) in as_dora {
        let status = post(&app, dora, path, &body).await.status();
        assert!(status.as_u16() < 500, "{path} {body}: {status}");
    }
    for path in [
        "/v1/tables?status=%00",
        "/v1/tables?after=%00",
        "/v1/me/disputes?after=%00",
        "/v1/admin/disputes?status=%00",
    ] {
        let status = get(&app, &cast.admin, path).await.status();
        assert!(status.as_u16() < 500, "{path}: {status}");
    }
}

/// When the kept audit of a table was computed, if it was.
async fn kept_at(app: &TestApp, id: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    let id: Uuid = id.parse().unwrap();
    sqlx::query_scalar("SELECT computed_at FROM kept_audits WHERE table_id = $1")
        .bind(id)
        .fetch_optional(&app.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn the_audit_of_a_finished_table_is_computed_once_and_kept_for_the_dispute_page() {
    let app = spawn_app().await;
    let cast = cast(&app).await;
    let id = finished(&app, &cast).await;
    let body = json!({"round": 1, "reason": "Check it"});
    let filed = json_of(
        post(&app, &cast.tokens[0], &disputes(&id), &body).await,
        201,
    )
    .await;
    let page = format!("/v1/admin/disputes/{}", filed["id"].as_str().unwrap());
    assert_eq!(kept_at(&app, &id).await, None);
    let first = json_of(get(&app, &cast.admin, &page).await, 200).await;
    assert_eq!(first["audit"]["ok"], true);
    let computed = kept_at(&app, &id).await.expect("kept");
    // Opened again: read back, not run again.
    let again = json_of(get(&app, &cast.admin, &page).await, 200).await;
    assert_eq!(again["audit"], first["audit"]);
    assert_eq!(kept_at(&app, &id).await, Some(computed));
    // An admin's explicit audit runs it again, and keeps that one.
    let audit = format!("/v1/admin/tables/{id}/audit");
    let fresh = json_of(get(&app, &cast.admin, &audit).await, 200).await;
    assert_eq!(fresh, first["audit"]);
    assert!(kept_at(&app, &id).await > Some(computed));

    // A game still running is audited each time, and nothing is kept.
    let running = round_two_running(&app, &cast).await;
    json_of(
        get(
            &app,
            &cast.admin,
            &format!("/v1/admin/tables/{running}/audit"),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(kept_at(&app, &running).await, None);
}
