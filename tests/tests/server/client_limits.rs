//! No client can wear the server down, and a token ends everywhere: the
//! findings of an outside probe of a running server, one test each (open
//! streams without limit, streams outliving their token, usernames spelt
//! two ways, lock-outs by anyone, 500s for client input, idempotent moves
//! answered as conflicts, a stream whose reader stalls).

use std::time::Duration;

use crate::support::{all_events, json_of, spawn_second_process, started_table, view};
use e2e::{assert_problem, eventually, spawn_app, spawn_app_with, TestApp};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn stream(app: &TestApp, token: &str, path: &str) -> e2e::checked::RequestBuilder {
    app.client.get(app.url(path)).bearer_auth(token)
}

/// Reads a stream until the server closes it; `false` if it is still
/// open after `within`.
async fn closes_within(res: &mut reqwest::Response, within: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, res.chunk()).await {
            Err(_) => return false,
            Ok(Ok(Some(_))) => continue,
            Ok(Ok(None) | Err(_)) => return true,
        }
    }
}

#[tokio::test]
async fn one_account_cannot_open_streams_without_limit_the_next_gets_429_too_many_streams() {
    let app = spawn_app_with(|s| s.max_streams_per_account = 3).await;
    let (id, tokens) = started_table(&app, "classique", json!({}), 2).await;
    let mut open = Vec::new();
    for path in ["events/stream", "view/stream", "events/stream"] {
        let res = stream(&app, &tokens[0], &format!("/v1/tables/{id}/{path}"))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        open.push(res);
    }
    let refused = stream(&app, &tokens[0], &format!("/v1/tables/{id}/events/stream"))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.headers()["retry-after"], "1");
    assert_problem(refused, 429, "too_many_streams").await;
    // A long poll counts too; other accounts are not held back.
    let poll = stream(
        &app,
        &tokens[0],
        &format!("/v1/tables/{id}/events?after=0&wait=5"),
    )
    .send()
    .await
    .unwrap();
    assert_problem(poll, 429, "too_many_streams").await;
    assert_eq!(view(&app, &tokens[1], &id).await["my_seat"], 1);
    let other = stream(&app, &tokens[1], &format!("/v1/tables/{id}/events/stream"))
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 200);

    // A client that goes away frees its place within seconds, not at the
    // stream's next write.
    open.pop();
    let freed = eventually(Duration::from_secs(5), || async {
        let res = stream(&app, &tokens[0], &format!("/v1/tables/{id}/events/stream"))
            .send()
            .await
            .unwrap();
        (res.status() == 200).then_some(res)
    })
    .await;
    assert!(freed.is_some(), "the closed stream's place was not freed");
}

#[tokio::test]
async fn a_revoked_token_ends_its_streams_and_long_polls_at_once() {
    let app = spawn_app().await;
    let (id, tokens) = started_table(&app, "classique", json!({}), 2).await;
    let mut events = stream(&app, &tokens[1], &format!("/v1/tables/{id}/events/stream"))
        .send()
        .await
        .unwrap();
    let mut views = stream(&app, &tokens[1], &format!("/v1/tables/{id}/view/stream"))
        .send()
        .await
        .unwrap();
    let version = view(&app, &tokens[1], &id).await["version"].clone();
    let poll = stream(&app, &tokens[1], &format!("/v1/tables/{id}/view?wait=20"))
        .header("if-none-match", format!("\"{version}\""))
        .send();
    let poll = tokio::spawn(poll);
    let events_poll = stream(
        &app,
        &tokens[1],
        &format!("/v1/tables/{id}/events?after={version}&wait=20"),
    )
    .send();
    let events_poll = tokio::spawn(events_poll);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(app.log_out(&tokens[1]).await.status(), 204);
    assert!(closes_within(&mut events, Duration::from_secs(3)).await);
    assert!(closes_within(&mut views, Duration::from_secs(3)).await);
    let answered = tokio::time::timeout(Duration::from_secs(3), poll)
        .await
        .expect("the view long poll ends with its token")
        .unwrap()
        .unwrap();
    assert_problem(answered, 401, "unauthorized").await;
    let answered = tokio::time::timeout(Duration::from_secs(3), events_poll)
        .await
        .expect("the events long poll ends with its token")
        .unwrap()
        .unwrap();
    assert_problem(answered, 401, "unauthorized").await;
}

#[tokio::test]
async fn a_token_revoked_through_another_process_ends_its_streams_within_seconds() {
    let app = spawn_app().await;
    let other = spawn_second_process(&app).await;
    let (id, tokens) = started_table(&app, "classique", json!({}), 2).await;
    let mut events = stream(
        &other,
        &tokens[1],
        &format!("/v1/tables/{id}/events/stream"),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(events.status(), 200);
    assert_eq!(app.log_out(&tokens[1]).await.status(), 204);
    assert!(closes_within(&mut events, Duration::from_secs(5)).await);
}

#[tokio::test]
async fn an_expired_token_ends_its_stream() {
    let app = spawn_app().await;
    let (id, tokens) = started_table(&app, "classique", json!({}), 2).await;
    sqlx::query("UPDATE sessions SET expires_at = now() + interval '2 seconds'")
        .execute(&app.pool)
        .await
        .unwrap();
    let mut events = stream(&app, &tokens[1], &format!("/v1/tables/{id}/events/stream"))
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), 200);
    assert!(closes_within(&mut events, Duration::from_secs(6)).await);
}

async fn log_in_raw(app: &TestApp, username: &str, password: &str) -> reqwest::Response {
    app.post_json(
        "/v1/sessions",
        &json!({"username": username, "password": password}),
    )
    .await
}

#[tokio::test]
async fn usernames_have_one_spelling_dotted_capital_i_and_the_kelvin_sign_do_not_log_in() {
    let app = spawn_app().await;
    app.register("kimihglg", "correct horse battery").await;
    for lookalike in ["k\u{130}mihglg", "\u{212a}imihglg", "KIMIHGLG\u{0}"] {
        let res = log_in_raw(&app, lookalike, "correct horse battery").await;
        assert_problem(res, 401, "invalid_credentials").await;
    }
    // ASCII case does not matter: one normal form.
    let res = log_in_raw(&app, "KimiHGLG", "correct horse battery").await;
    assert_eq!(res.status(), 201);
}

#[tokio::test]
async fn lookalike_usernames_share_one_throttling_bucket() {
    let app = spawn_app().await;
    // 2^n spellings with n letters i: all of them one key, locked after 5.
    for name in [
        "k\u{130}mi",
        "k\u{130}m\u{130}",
        "kim\u{130}",
        "k\u{130}mi_",
        "\u{130}\u{130}\u{130}",
    ] {
        assert_eq!(log_in_raw(&app, name, "wrong password").await.status(), 401);
    }
    let res = log_in_raw(&app, "k\u{130}m\u{130}\u{130}", "wrong password").await;
    assert_problem(res, 429, "too_many_requests").await;
}

#[tokio::test]
async fn a_nul_in_the_username_is_a_401_not_a_500() {
    let app = spawn_app().await;
    let res = log_in_raw(&app, "ali\u{0}ce", "correct horse battery").await;
    assert_problem(res, 401, "invalid_credentials").await;
}

#[tokio::test]
async fn five_wrong_passwords_from_anywhere_do_not_lock_the_owner_out_nor_can_a_forwarded_claim_escape(
) {
    let app = spawn_app_with(|s| s.trust_proxy = true).await;
    app.register("victim", "correct horse battery").await;
    let from = |ip: &'static str, password: &'static str| {
        app.client
            .post(app.url("/v1/sessions"))
            .header("x-forwarded-for", ip)
            .json(&json!({"username": "victim", "password": password}))
            .send()
    };
    for _ in 0..5 {
        assert_eq!(
            from("10.9.9.9", "wrong password").await.unwrap().status(),
            401
        );
    }
    let locked = from("10.9.9.9", "correct horse battery").await.unwrap();
    assert_problem(locked, 429, "too_many_requests").await;
    // What the guesser writes itself comes before what the proxy appends
    // (the peer it saw), and is not believed; nor is `Forwarded`.
    let claimed = app
        .client
        .post(app.url("/v1/sessions"))
        .header("forwarded", "for=10.1.1.1")
        .header("x-forwarded-for", "10.1.1.1, 10.9.9.9")
        .json(&json!({"username": "victim", "password": "correct horse battery"}))
        .send()
        .await
        .unwrap();
    assert_problem(claimed, 429, "too_many_requests").await;
    let owner = from("10.1.1.1", "correct horse battery").await.unwrap();
    assert_eq!(owner.status(), 201, "the owner elsewhere logs in");
}

#[tokio::test]
async fn a_cursor_out_of_range_is_a_400_not_a_500() {
    let app = spawn_app().await;
    let token = app.player_token("lister").await;
    for after in [
        "-210866803200000001.00000000000000000000000000000000",
        "9223372036854775807.00000000000000000000000000000000",
    ] {
        let res = app
            .get_as(&format!("/v1/tables?after={after}"), &token)
            .await;
        assert_problem(res, 400, "invalid_query").await;
    }
}

#[tokio::test]
async fn an_event_stream_after_below_zero_is_a_400_like_events() {
    let app = spawn_app().await;
    let (id, tokens) = started_table(&app, "classique", json!({}), 2).await;
    let res = stream(
        &app,
        &tokens[0],
        &format!("/v1/tables/{id}/events/stream?after=-5"),
    )
    .send()
    .await
    .unwrap();
    assert_problem(res, 400, "invalid_query").await;
    // Also when a `Last-Event-ID` (which wins over `after`) comes with it.
    let res = stream(
        &app,
        &tokens[0],
        &format!("/v1/tables/{id}/events/stream?after=-1"),
    )
    .header("Last-Event-ID", "0")
    .send()
    .await
    .unwrap();
    assert_problem(res, 400, "invalid_query").await;
}

#[tokio::test]
async fn an_idempotency_key_with_a_tab_is_a_400() {
    let app = spawn_app().await;
    let (id, tokens) = started_table(&app, "classique", json!({}), 2).await;
    // (Leading and trailing spaces never reach the server: HTTP trims them.)
    for key in ["a\tb", ""] {
        let res = app
            .client
            .post(app.url(&format!("/v1/tables/{id}/moves")))
            .bearer_auth(&tokens[0])
            .header("idempotency-key", key)
            .json(&json!({"move": {"type": "draw"}}))
            .send()
            .await
            .unwrap();
        assert_problem(res, 400, "invalid_header").await;
    }
}

#[tokio::test]
async fn six_concurrent_identical_moves_with_one_key_never_answer_version_conflict() {
    let app = spawn_app().await;
    let (id, tokens) = started_table(&app, "classique", json!({}), 2).await;
    let v = view(&app, &tokens[0], &id).await;
    let seat = v["current_seat"].as_u64().unwrap() as usize;
    let mine = view(&app, &tokens[seat], &id).await;
    let mv = mine["legal_moves"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["type"] == "draw")
        .cloned()
        .unwrap_or_else(|| mine["legal_moves"][0].clone());
    let version = mine["version"].as_i64().unwrap();
    let sends = (0..6).map(|_| {
        app.client
            .post(app.url(&format!("/v1/tables/{id}/moves")))
            .bearer_auth(&tokens[seat])
            .header("idempotency-key", "same-move-1")
            .json(&json!({"move": mv}))
            .send()
    });
    let answers = futures_util::future::join_all(sends).await;
    let mut versions = Vec::new();
    for res in answers {
        let res = res.unwrap();
        let status = res.status().as_u16();
        let body: Value = res.json().await.unwrap();
        match status {
            200 => versions.push(body["version"].as_i64().unwrap()),
            409 if body["code"] == "version_conflict" => panic!("{body}"),
            409 => assert_eq!(body["code"], "idempotency_key_in_use", "{body}"),
            other => panic!("{other}: {body}"),
        }
    }
    assert!(!versions.is_empty());
    assert!(versions.iter().all(|v| *v == versions[0]), "{versions:?}");
    let after = json_of(
        app.get_as(&format!("/v1/tables/{id}"), &tokens[0]).await,
        200,
    )
    .await;
    assert_eq!(after["version"], versions[0], "the move was applied once");
    assert!(versions[0] > version);
}

/// Asserts a 429 `too_many_requests` whose `Retry-After` is a whole number
/// of seconds, at least 1 and at most a minute (the buckets' period).
async fn assert_rate_limited(res: reqwest::Response) {
    let wait: u64 = res.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&wait), "Retry-After: {wait}");
    assert_problem(res, 429, "too_many_requests").await;
}

#[tokio::test]
async fn accounts_created_without_limit_from_one_address_get_429_with_retry_after() {
    let app = spawn_app_with(|s| s.sign_ups_per_minute = 3).await;
    for n in 0..3 {
        app.register(&format!("flood{n}"), "correct horse battery")
            .await;
    }
    let creds = json!({"username": "flood3", "password": "correct horse battery"});
    assert_rate_limited(app.post_json("/v1/accounts", &creds).await).await;
    // Nothing was created, and an invalid request is still told what is
    // wrong with it (it would create nothing, so it costs no quota).
    let res = app.post_json("/v1/sessions", &creds).await;
    assert_problem(res, 401, "invalid_credentials").await;
    let res = app
        .post_json(
            "/v1/accounts",
            &json!({"username": "x", "password": "correct horse battery"}),
        )
        .await;
    assert_problem(res, 422, "invalid_username").await;
}

#[tokio::test]
async fn sessions_opened_without_limit_for_one_account_get_429_and_wrong_passwords_cost_no_quota() {
    let app = spawn_app_with(|s| s.log_ins_per_minute = 2).await;
    app.register("busy", "correct horse battery").await;
    app.register("other", "correct horse battery").await;
    // Wrong passwords (the log-in throttle's business) do not spend the
    // owner's quota: anyone could otherwise keep them from logging in.
    for _ in 0..3 {
        let res = app
            .post_json(
                "/v1/sessions",
                &json!({"username": "busy", "password": "wrong password"}),
            )
            .await;
        assert_problem(res, 401, "invalid_credentials").await;
    }
    app.login("busy", "correct horse battery").await;
    app.login("busy", "correct horse battery").await;
    let res = app
        .post_json(
            "/v1/sessions",
            &json!({"username": "busy", "password": "correct horse battery"}),
        )
        .await;
    assert_rate_limited(res).await;
    app.login("other", "correct horse battery").await;
}

#[tokio::test]
async fn tables_created_without_limit_by_one_account_get_429_with_retry_after() {
    let app = spawn_app_with(|s| s.tables_per_minute = 2).await;
    let token = app.player_token("builder").await;
    let other = app.player_token("another").await;
    let create = |token: &str, ruleset: &str| {
        app.client
            .post(app.url("/v1/tables"))
            .bearer_auth(token)
            .json(&json!({"ruleset": ruleset, "seats": 2}))
            .send()
    };
    for _ in 0..2 {
        assert_eq!(create(&token, "classique").await.unwrap().status(), 201);
    }
    assert_rate_limited(create(&token, "classique").await.unwrap()).await;
    // An invalid table is refused for what it is, and costs nothing.
    assert_problem(create(&token, "nope").await.unwrap(), 422, "invalid_rules").await;
    assert_eq!(create(&other, "classique").await.unwrap().status(), 201);
    let listed = json_of(app.get_as("/v1/tables?limit=100", &token).await, 200).await;
    assert_eq!(listed["tables"].as_array().unwrap().len(), 3);
}

/// The `id:`s of the whole frames in `bytes` (a frame ends with a blank
/// line; a frame cut short is not one).
fn whole_frames(bytes: &[u8]) -> Vec<i64> {
    let text = String::from_utf8_lossy(bytes);
    let Some(end) = text.rfind("\n\n") else {
        return Vec::new();
    };
    text[..end]
        .lines()
        .filter_map(|l| l.strip_prefix("id: ")?.parse().ok())
        .collect()
}

#[tokio::test]
async fn a_stalled_reader_is_cut_off_without_holding_back_others_and_resumes_without_a_gap() {
    let app = spawn_app_with(|s| {
        s.stalled_reader_secs = 1;
        s.send_buffer_bytes = 16 * 1024;
        s.max_streams_per_account = 1;
    })
    .await;
    let (id, tokens) = started_table(&app, "classique", json!({"target": 100000}), 2).await;
    let path = format!("/v1/tables/{id}/events/stream");

    // The stalled reader: a small receive buffer, the request sent, then
    // nothing read.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let server = app.address.trim_start_matches("http://").parse().unwrap();
    let mut stalled = socket.connect(server).await.unwrap();
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {server}\r\nAuthorization: Bearer {}\r\n\r\n",
        tokens[1]
    );
    stalled.write_all(request.as_bytes()).await.unwrap();

    // Another follower of the table, read as frames come.
    let mut follower = stream(&app, &tokens[0], &path).send().await.unwrap();
    assert_eq!(follower.status(), 200);
    let followed = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let reading = {
        let followed = followed.clone();
        tokio::spawn(async move {
            while let Ok(Some(chunk)) = follower.chunk().await {
                followed.lock().unwrap().extend_from_slice(&chunk);
            }
        })
    };

    // Play until the stalled stream's place is free again (one stream per
    // account): its writes filled the buffers, nothing was acknowledged for
    // a second, and the server closed it.
    let mut moves = 0;
    loop {
        let v = view(&app, &tokens[0], &id).await;
        let seat = v["current_seat"].as_u64().expect("a seat on turn") as usize;
        let mine = if seat == 0 {
            v
        } else {
            view(&app, &tokens[1], &id).await
        };
        let (mv, version) = (&mine["legal_moves"][0], mine["version"].as_i64());
        json_of(
            crate::support::play(&app, &tokens[seat], &id, mv, version).await,
            200,
        )
        .await;
        moves += 1;
        if moves % 20 == 0 {
            let probe = stream(&app, &tokens[1], &path).send().await.unwrap();
            if probe.status() == 200 {
                break;
            }
            assert_eq!(
                probe.status(),
                429,
                "the stalled stream still holds its place"
            );
        }
        assert!(moves < 2000, "the stalled reader was never cut off");
    }
    let last = all_events(&app, &tokens[1], &id).await.len() as i64;

    // Not held back: the other follower has every event.
    let got = eventually(Duration::from_secs(5), || async {
        let ids = whole_frames(&followed.lock().unwrap());
        (ids.last() == Some(&last)).then_some(ids)
    })
    .await
    .expect("the other follower has every event");
    assert_eq!(got, (1..=last).collect::<Vec<_>>());
    reading.abort();

    // What the stalled reader had before the cut, then the rest from where
    // it was, through Last-Event-ID: every event once, in order.
    let mut before = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stalled.read_to_end(&mut before)).await;
    let mut ids = whole_frames(&before);
    assert!(!ids.is_empty() && *ids.last().unwrap() < last, "{ids:?}");
    let resume_after = *ids.last().unwrap();
    let mut resumed = eventually(Duration::from_secs(5), || async {
        let res = stream(&app, &tokens[1], &path)
            .header("last-event-id", resume_after.to_string())
            .send()
            .await
            .unwrap();
        (res.status() == 200).then_some(res)
    })
    .await
    .expect("the stream opens again");
    let mut rest = Vec::new();
    while whole_frames(&rest).last() != Some(&last) {
        let chunk = tokio::time::timeout(Duration::from_secs(5), resumed.chunk())
            .await
            .expect("the rest comes")
            .unwrap()
            .expect("the stream stays open");
        rest.extend_from_slice(&chunk);
    }
    ids.extend(whole_frames(&rest));
    assert_eq!(ids, (1..=last).collect::<Vec<_>>(), "no gap, no repeat");
}
