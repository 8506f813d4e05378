//! Registration, log-in, log-out, `/v1/me`, and their error paths.

use e2e::{assert_problem, spawn_app, spawn_app_with};
use serde_json::{json, Value};

#[tokio::test]
async fn register_returns_the_account_as_a_player() {
    let app = spawn_app().await;
    let res = app
        .post_json(
            "/v1/accounts",
            &json!({"username": "Alice", "password": "correct horse"}),
        )
        .await;
    assert_eq!(res.status(), 201);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["username"], "Alice");
    assert_eq!(body["role"], "player");
    assert!(body["id"].as_str().unwrap().parse::<uuid::Uuid>().is_ok());
    assert_eq!(body.as_object().unwrap().len(), 3);

    // The password is stored as an argon2id hash only.
    let stored: String = sqlx::query_scalar("SELECT password_hash FROM accounts")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert!(
        stored.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
        "{stored}"
    );
    assert!(!stored.contains("correct horse"));
}

#[tokio::test]
async fn usernames_are_unique_case_insensitively() {
    let app = spawn_app().await;
    app.register("alice", "correct horse").await;
    for name in ["alice", "ALICE", "aLiCe"] {
        let res = app
            .post_json(
                "/v1/accounts",
                &json!({"username": name, "password": "another one"}),
            )
            .await;
        assert_problem(res, 409, "username_taken").await;
    }
    // And log-in is case-insensitive on the username too.
    app.login("ALICE", "correct horse").await;
}

#[tokio::test]
async fn bad_usernames_are_refused() {
    let app = spawn_app().await;
    let long = "x".repeat(33);
    for name in ["ab", "has space", "émile", "dot.ted", long.as_str(), ""] {
        let res = app
            .post_json(
                "/v1/accounts",
                &json!({"username": name, "password": "correct horse"}),
            )
            .await;
        assert_problem(res, 422, "invalid_username").await;
    }
}

#[tokio::test]
async fn bad_passwords_are_refused() {
    let app = spawn_app().await;
    let long = "p".repeat(257);
    for password in ["short", "1234567", long.as_str()] {
        let res = app
            .post_json(
                "/v1/accounts",
                &json!({"username": "bob", "password": password}),
            )
            .await;
        assert_problem(res, 422, "invalid_password").await;
    }
}

#[tokio::test]
async fn malformed_json_is_400() {
    let app = spawn_app().await;
    for body in ["{", "not json", r#"{"username": "a",}"#, ""] {
        let res = app
            .client
            .post(app.url("/v1/accounts"))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_problem(res, 400, "malformed_json").await;
    }
}

#[tokio::test]
async fn json_of_the_wrong_shape_is_422() {
    let app = spawn_app().await;
    for body in [
        json!({"username": "bob", "password": "correct horse", "role": "admin"}),
        json!({"username": "bob"}),
        json!({"username": 12, "password": "correct horse"}),
        json!([1, 2]),
    ] {
        let res = app.post_json("/v1/accounts", &body).await;
        let problem = assert_problem(res, 422, "invalid_body").await;
        assert!(!problem["detail"].as_str().unwrap().is_empty());
    }
    let res = app
        .post_json(
            "/v1/sessions",
            &json!({"username": "bob", "password": "x", "remember": true}),
        )
        .await;
    let problem = assert_problem(res, 422, "invalid_body").await;
    assert!(problem["detail"]
        .as_str()
        .unwrap()
        .contains("unknown field"));
}

#[tokio::test]
async fn a_body_that_is_not_json_is_415() {
    let app = spawn_app().await;
    let body = r#"{"username": "bob", "password": "correct horse"}"#;
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let mut req = app.client.post(app.url("/v1/accounts")).body(body);
        if let Some(ct) = content_type {
            req = req.header("content-type", ct);
        }
        let res = req.send().await.unwrap();
        assert_problem(res, 415, "unsupported_media_type").await;
    }
}

#[tokio::test]
async fn an_oversized_body_is_413() {
    let app = spawn_app_with(|s| s.body_limit_bytes = 1024).await;
    let res = app
        .post_json(
            "/v1/accounts",
            &json!({"username": "bob", "password": "p".repeat(2000)}),
        )
        .await;
    assert_problem(res, 413, "payload_too_large").await;
}

#[tokio::test]
async fn log_in_then_me_then_log_out() {
    let app = spawn_app().await;
    let account = app.register("carol", "correct horse").await;
    let session = app.login("carol", "correct horse").await;
    let token = session["token"].as_str().unwrap();
    assert_eq!(token.len(), 64);
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(session["account"], account);
    let expires_at: chrono::DateTime<chrono::Utc> =
        session["expires_at"].as_str().unwrap().parse().unwrap();
    assert!(expires_at > chrono::Utc::now() + chrono::Duration::days(29));

    // Only the token's SHA-256 is stored.
    let stored: String = sqlx::query_scalar("SELECT token_hash FROM sessions")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_ne!(stored, token);
    assert_eq!(stored, api::auth::token_hash(token));

    let me = app.get_as("/v1/me", token).await;
    assert_eq!(me.status(), 200);
    assert_eq!(me.json::<Value>().await.unwrap(), account);

    let out = app.log_out(token).await;
    assert_eq!(out.status(), 204);

    // A revoked token no longer works, for /me or for logging out again.
    let me = app.get_as("/v1/me", token).await;
    assert_problem(me, 401, "unauthorized").await;
    let out = app.log_out(token).await;
    assert_problem(out, 401, "unauthorized").await;
}

#[tokio::test]
async fn a_token_revoked_here_is_refused_at_once_on_the_cached_game_routes() {
    // /view, /moves and /events reuse a session lookup for 2 s; a log-out
    // through the same process must drop it at once.
    let app = spawn_app().await;
    let token = app.player_token("erin").await;
    let view = format!("/v1/tables/{}/view", uuid::Uuid::new_v4());
    let res = app.get_as(&view, &token).await;
    assert_problem(res, 404, "not_found").await;
    let out = app.log_out(&token).await;
    assert_eq!(out.status(), 204);
    let res = app.get_as(&view, &token).await;
    assert_problem(res, 401, "unauthorized").await;
}

#[tokio::test]
async fn sessions_are_independent() {
    let app = spawn_app().await;
    app.register("dave", "correct horse").await;
    let a = app.login("dave", "correct horse").await["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let b = app.login("dave", "correct horse").await["token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(a, b);
    let out = app.log_out(&a).await;
    assert_eq!(out.status(), 204);
    let me = app.get_as("/v1/me", &b).await;
    assert_eq!(me.status(), 200);
}

#[tokio::test]
async fn wrong_credentials_are_401() {
    let app = spawn_app().await;
    app.register("erin", "correct horse").await;
    for (user, password) in [
        ("erin", "wrong horse"),
        ("nobody", "correct horse"),
        ("x y", "z"),
    ] {
        let res = app
            .post_json(
                "/v1/sessions",
                &json!({"username": user, "password": password}),
            )
            .await;
        assert!(res.headers().get("www-authenticate").is_some());
        assert_problem(res, 401, "invalid_credentials").await;
    }
}

#[tokio::test]
async fn missing_or_bad_tokens_are_401_with_www_authenticate() {
    let app = spawn_app().await;
    let unknown = "ab".repeat(32);
    let cases: Vec<Option<String>> = vec![
        None,
        Some("Bearer".into()),
        Some("Bearer ".into()),
        Some("Bearer not-a-token".into()),
        Some(format!("Basic {unknown}")),
        Some(format!("Bearer {unknown}")),
        Some(format!("Bearer {}", "AB".repeat(32))),
    ];
    for header in cases {
        let mut req = app.client.get(app.url("/v1/me"));
        if let Some(h) = &header {
            req = req.header("authorization", h);
        }
        let res = req.send().await.unwrap();
        let challenge = res
            .headers()
            .get("www-authenticate")
            .map(|v| v.to_str().unwrap().to_owned());
        assert_eq!(
            challenge.as_deref(),
            Some("Bearer realm=\"huit\""),
            "{header:?}"
        );
        assert_problem(res, 401, "unauthorized").await;
    }
}

#[tokio::test]
async fn an_expired_token_is_401() {
    let app = spawn_app().await;
    let token = app.player_token("frank").await;
    let me = app.get_as("/v1/me", &token).await;
    assert_eq!(me.status(), 200);
    sqlx::query("UPDATE sessions SET expires_at = now() - interval '1 second'")
        .execute(&app.pool)
        .await
        .unwrap();
    let me = app.get_as("/v1/me", &token).await;
    assert_problem(me, 401, "unauthorized").await;
}

#[tokio::test]
async fn a_short_token_ttl_is_honoured() {
    let app = spawn_app_with(|s| s.token_ttl_secs = 60).await;
    app.register("gina", "correct horse").await;
    let session = app.login("gina", "correct horse").await;
    let expires_at: chrono::DateTime<chrono::Utc> =
        session["expires_at"].as_str().unwrap().parse().unwrap();
    let left = expires_at - chrono::Utc::now();
    assert!(left <= chrono::Duration::seconds(60) && left > chrono::Duration::seconds(50));
}

#[tokio::test]
async fn failed_logins_are_throttled_per_username() {
    let app = spawn_app_with(|s| {
        s.login_max_failures = 3;
        s.login_window_secs = 120;
    })
    .await;
    app.register("hugo", "correct horse").await;
    for _ in 0..3 {
        let res = app
            .post_json(
                "/v1/sessions",
                &json!({"username": "hugo", "password": "wrong guess"}),
            )
            .await;
        assert_problem(res, 401, "invalid_credentials").await;
    }
    // Now even the right password is refused, whatever the username's case.
    for name in ["hugo", "HUGO"] {
        let res = app
            .post_json(
                "/v1/sessions",
                &json!({"username": name, "password": "correct horse"}),
            )
            .await;
        let retry_after: u64 = res.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!((1..=120).contains(&retry_after), "{retry_after}");
        assert_problem(res, 429, "too_many_requests").await;
    }
    // Other usernames are not affected.
    app.register("iris", "correct horse").await;
    app.login("iris", "correct horse").await;
}

#[tokio::test]
async fn failed_logins_are_throttled_per_address() {
    let app = spawn_app_with(|s| {
        s.login_max_failures = 100;
        s.login_max_failures_per_address = 3;
    })
    .await;
    app.register("jack", "correct horse").await;
    for name in ["u1", "u2", "u3"] {
        let res = app
            .post_json(
                "/v1/sessions",
                &json!({"username": name, "password": "wrong guess"}),
            )
            .await;
        assert_problem(res, 401, "invalid_credentials").await;
    }
    let res = app
        .post_json(
            "/v1/sessions",
            &json!({"username": "jack", "password": "correct horse"}),
        )
        .await;
    assert!(res.headers().contains_key("retry-after"));
    assert_problem(res, 429, "too_many_requests").await;
}
