//! Concurrent writers on one table, in one process and across two server
//! processes sharing one database.

use crate::support;

use std::time::{Duration, Instant};

use crate::support::{all_events, get, json_of, play, post_empty, started_table, view, view_poll};
use e2e::{spawn_app, TestApp};
use serde_json::{json, Value};
use store::chain::verify_chain;

/// The stored log of a table: seqs 1..=n, no gap, no duplicate, chained.
async fn assert_log_whole(app: &TestApp, id: &str) -> usize {
    let log = store::events::read_after(&app.pool, id.parse().unwrap(), 0, 1_000_000)
        .await
        .unwrap();
    for (i, e) in log.iter().enumerate() {
        assert_eq!(e.seq, i as i64 + 1, "a gap or a duplicate");
    }
    verify_chain(&log).expect("chained");
    log.len()
}

#[tokio::test]
async fn of_many_moves_at_one_version_exactly_one_wins() {
    let app = spawn_app().await;
    let (id, tokens) = started_table(&app, "moderne", json!({}), 2).await;
    const CLIENTS: usize = 8;
    let mut wins = 0;
    for _ in 0..12 {
        let v0 = view(&app, &tokens[0], &id).await;
        if v0["status"] != "playing" {
            break;
        }
        let version = v0["version"].as_i64().unwrap();
        let seat = v0["current_seat"].as_u64().unwrap() as usize;
        let mine = view(&app, &tokens[seat], &id).await;
        let moves = mine["legal_moves"].as_array().unwrap().clone();
        let mut tasks = Vec::new();
        for c in 0..CLIENTS {
            let client = app.client.clone();
            let url = app.url(&format!("/v1/tables/{id}/moves"));
            // Half of the clients are the other player, posting a draw.
            let (token, mv) = if c % 2 == 0 {
                (tokens[seat].clone(), moves[c % moves.len()].clone())
            } else {
                (tokens[1 - seat].clone(), json!({"type": "draw"}))
            };
            tasks.push(tokio::spawn(async move {
                let res = client
                    .post(url)
                    .bearer_auth(token)
                    .json(&json!({"move": mv, "expected_version": version}))
                    .send()
                    .await
                    .unwrap();
                let status = res.status().as_u16();
                (status, res.json::<Value>().await.unwrap())
            }));
        }
        let mut ok = 0;
        for t in tasks {
            let (status, body) = t.await.unwrap();
            match status {
                200 => ok += 1,
                409 => assert_eq!(body["code"], "version_conflict", "{body}"),
                422 => assert_eq!(body["code"], "not_your_turn", "{body}"),
                other => panic!("{other}: {body}"),
            }
        }
        assert_eq!(ok, 1, "exactly one move wins version {version}");
        wins += 1;
    }
    assert!(wins > 0);
    let n = assert_log_whole(&app, &id).await;
    let feed = all_events(&app, &tokens[0], &id).await;
    assert_eq!(feed.len(), n);
}

#[tokio::test]
async fn without_an_expected_version_concurrent_moves_serialize() {
    let app = spawn_app().await;
    let (id, tokens) = started_table(&app, "classique", json!({}), 2).await;
    let v = view(&app, &tokens[0], &id).await;
    let before = v["version"].as_i64().unwrap();
    let seat = v["current_seat"].as_u64().unwrap() as usize;
    let moves = view(&app, &tokens[seat], &id).await["legal_moves"]
        .as_array()
        .unwrap()
        .clone();
    let mut tasks = Vec::new();
    for c in 0..10 {
        let client = app.client.clone();
        let url = app.url(&format!("/v1/tables/{id}/moves"));
        let (token, mv) = if c % 2 == 0 {
            (tokens[seat].clone(), moves[c % moves.len()].clone())
        } else {
            (tokens[1 - seat].clone(), json!({"type": "draw"}))
        };
        tasks.push(tokio::spawn(async move {
            let res = client
                .post(url)
                .bearer_auth(token)
                .json(&json!({"move": mv}))
                .send()
                .await
                .unwrap();
            res.status().as_u16()
        }));
    }
    let mut ok = 0;
    for t in tasks {
        match t.await.unwrap() {
            200 => ok += 1,
            422 | 409 => {}
            other => panic!("status {other}"),
        }
    }
    assert!(ok >= 1);
    let n = assert_log_whole(&app, &id).await as i64;
    assert!(n > before);
    assert_eq!(view(&app, &tokens[1], &id).await["version"], n);
}

#[tokio::test]
async fn two_server_processes_serve_one_table() {
    let a = spawn_app().await;
    let b = support::spawn_second_process(&a).await;
    let (id, tokens) = started_table(&a, "classique", json!({}), 2).await;

    // B sees what A did.
    let va = view(&a, &tokens[0], &id).await;
    let vb = view(&b, &tokens[0], &id).await;
    assert_eq!(va, vb);
    let version = va["version"].as_i64().unwrap();
    let seat = va["current_seat"].as_u64().unwrap() as usize;

    // A long poll on B is answered when a move is committed through A.
    let mut poll = {
        let client = b.client.clone();
        let url = b.url(&format!("/v1/tables/{id}/events?after={version}&wait=20"));
        let token = tokens[1 - seat].clone();
        tokio::spawn(async move {
            let res = client.get(url).bearer_auth(token).send().await.unwrap();
            res.json::<Value>().await.unwrap()
        })
    };
    assert!(
        tokio::time::timeout(Duration::from_millis(300), &mut poll)
            .await
            .is_err(),
        "the long poll answered with nothing new"
    );
    let mv = view(&a, &tokens[seat], &id).await["legal_moves"][0].clone();
    let started = Instant::now();
    let answer = json_of(play(&a, &tokens[seat], &id, &mv, Some(version)).await, 200).await;
    let page = tokio::time::timeout(Duration::from_secs(10), poll)
        .await
        .expect("B's long poll answers")
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(page["events"][0]["seq"], version + 1, "{page}");
    assert_eq!(page["next"], answer["version"]);

    // B's cache is up to date: a move based on A's version goes through B,
    // then A takes B's.
    let mut at = answer["version"].as_i64().unwrap();
    for round in 0..6 {
        let server = if round % 2 == 0 { &b } else { &a };
        let v = view(server, &tokens[0], &id).await;
        assert_eq!(v["version"], at);
        if v["status"] != "playing" {
            break;
        }
        let s = v["current_seat"].as_u64().unwrap() as usize;
        let mv = view(server, &tokens[s], &id).await["legal_moves"][0].clone();
        let answer = json_of(play(server, &tokens[s], &id, &mv, Some(at)).await, 200).await;
        at = answer["version"].as_i64().unwrap();
    }

    // Both processes at once, at one version: one wins, the other gets 409.
    let v = view(&a, &tokens[0], &id).await;
    if v["status"] == "playing" {
        let s = v["current_seat"].as_u64().unwrap() as usize;
        let mv = view(&a, &tokens[s], &id).await["legal_moves"][0].clone();
        let (ra, rb) = tokio::join!(
            play(&a, &tokens[s], &id, &mv, Some(at)),
            play(&b, &tokens[s], &id, &mv, Some(at)),
        );
        let mut statuses = [ra.status().as_u16(), rb.status().as_u16()];
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 409]);
    }
    let n = assert_log_whole(&a, &id).await;
    let summary_a = json_of(get(&a, &tokens[1], &format!("/v1/tables/{id}")).await, 200).await;
    let summary_b = json_of(get(&b, &tokens[1], &format!("/v1/tables/{id}")).await, 200).await;
    assert_eq!(summary_a, summary_b);
    assert_eq!(summary_a["version"], n as i64);
    let _ = post_empty;
}

#[tokio::test]
async fn a_view_long_poll_on_one_process_is_answered_by_a_move_through_another() {
    let a = spawn_app().await;
    let b = support::spawn_second_process(&a).await;
    let (id, tokens) = started_table(&a, "classique", json!({}), 2).await;
    let v = view(&b, &tokens[0], &id).await;
    let version = v["version"].as_i64().unwrap();
    let seat = v["current_seat"].as_u64().unwrap() as usize;
    let waiting = tokens[1 - seat].clone();
    let poll_b = |version: i64, wait: u64| {
        view_poll(&b, &id, &waiting, Some(&format!("\"{version}\"")), wait)
    };

    let mut poll = tokio::spawn(poll_b(version, 20));
    assert!(
        tokio::time::timeout(Duration::from_millis(300), &mut poll)
            .await
            .is_err(),
        "the view long poll answered with nothing new"
    );
    let mv = view(&a, &tokens[seat], &id).await["legal_moves"][0].clone();
    let answer = json_of(play(&a, &tokens[seat], &id, &mv, Some(version)).await, 200).await;
    let res = tokio::time::timeout(Duration::from_secs(10), poll)
        .await
        .expect("B's view long poll answers")
        .unwrap();
    assert_eq!(json_of(res, 200).await["version"], answer["version"]);

    // A version made through A and asked of B straight away: B's view is
    // never older than it (a 304 at the deadline, not B's older view).
    let seat = answer["view"]["current_seat"].as_u64().unwrap() as usize;
    let version = answer["version"].as_i64().unwrap();
    let mv = view(&a, &tokens[seat], &id).await["legal_moves"][0].clone();
    let answer = json_of(play(&a, &tokens[seat], &id, &mv, Some(version)).await, 200).await;
    let res = poll_b(answer["version"].as_i64().unwrap(), 1).await;
    assert_eq!(res.status(), 304);
}

/// A join appends in a transaction and names the person it seats before
/// answering: on that transaction's connection. Reading the names from
/// another of the pool while holding one, as many joins at once as the
/// pool has connections held all of it and waited for each other until
/// they got 503 (`scripts/bench --ccu` opening its tables).
#[tokio::test]
async fn more_joins_at_once_than_the_pool_has_connections_are_all_seated() {
    let app = e2e::spawn_app_with(|s| {
        s.db_max_connections = 4;
        s.db_acquire_timeout_secs = 2;
        s.tables_per_minute = 0;
        s.sign_ups_per_minute = 0;
    })
    .await;
    let host = app.player_token("pool_host").await;
    let mut tables = Vec::new();
    for _ in 0..12 {
        let body = json!({"ruleset": "classique", "seats": 2});
        let table = json_of(support::post(&app, &host, "/v1/tables", &body).await, 201).await;
        tables.push(table["id"].as_str().unwrap().to_owned());
    }
    let mut guests = Vec::new();
    for i in 0..12 {
        guests.push(app.player_token(&format!("pool_guest_{i}")).await);
    }
    let joins = tables.iter().zip(&guests).map(|(id, token)| {
        let app = &app;
        async move { post_empty(app, token, &format!("/v1/tables/{id}/players")).await }
    });
    for joined in futures_util::future::join_all(joins).await {
        json_of(joined, 200).await;
    }
}
