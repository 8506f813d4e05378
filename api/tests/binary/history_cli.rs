//! `huit replay` and `huit audit` against a real database (DATABASE_URL's
//! cluster, as scripts/test provides), on logs generated in-process.

use std::process::{Command, Output};

use sqlx::PgPool;
use uuid::Uuid;

async fn database() -> (String, PgPool) {
    crate::support::migrated_database().await
}

/// A finished two-round game between three accounts, stored.
async fn stored_game(pool: &PgPool, seed: u64) -> Uuid {
    let mut players = Vec::new();
    for name in ["ana", "bob", "cyd"] {
        let a = store::accounts::insert(pool, name, "$argon2id$x", store::accounts::Role::Player)
            .await
            .unwrap();
        players.push((a.id, name.to_owned()));
    }
    let game = crate::games::play_game("moderne", serde_json::json!({"rounds": 2}), &players, seed);
    crate::games::store_table(pool, players[0].0, &game.batches).await
}

fn huit(url: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_huit"))
        .args(args)
        .env("DATABASE_URL", url)
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn huit_replay_prints_each_step_with_the_top_card_and_every_hand() {
    let (url, pool) = database().await;
    let table = stored_game(&pool, 1).await;
    let out = huit(&url, &["replay", &table.to_string(), "--round", "1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    assert!(
        text.contains("round 1: seat 0 ana, seat 1 bob, seat 2 cyd"),
        "{text}"
    );
    assert!(text.contains("step   0"), "{text}");
    assert!(text.contains("round_started: round 1"), "{text}");
    assert!(text.contains("card_played:"), "{text}");
    assert!(text.contains("round_ended: out order"), "{text}");
    assert!(text.contains("hand sizes ["), "{text}");
    for seat in 0..3 {
        assert!(text.contains(&format!("seat {seat}: ")), "{text}");
    }
    // Default: the last round; an unknown round fails.
    let last = stdout(&huit(&url, &["replay", &table.to_string()]));
    assert!(last.contains("round 2:"), "{last}");
    let out = huit(&url, &["replay", &table.to_string(), "--round", "9"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no round 9"));
}

#[tokio::test]
async fn huit_audit_passes_on_a_clean_log_and_exits_non_zero_on_every_kind_of_tampering() {
    let (url, pool) = database().await;
    let clean = stored_game(&pool, 2).await;
    let out = huit(&url, &["audit", &clean.to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("audit: OK"));

    crate::games::tamper::allow_changes(&pool).await;
    // Each kind of direct change, on its own copy of a game, and the seq the
    // audit must name.
    let mut cases: Vec<(&str, Uuid, i64)> = Vec::new();
    let t = stored_game_again(&pool, 3).await;
    crate::games::tamper::edit_data(&pool, t, 14, "seat", serde_json::json!(0)).await;
    cases.push(("edited", t, 14));
    let t = stored_game_again(&pool, 4).await;
    crate::games::tamper::swap(&pool, t, 9, 10).await;
    cases.push(("swapped", t, 9));
    let t = stored_game_again(&pool, 5).await;
    crate::games::tamper::delete(&pool, t, 11).await;
    cases.push(("deleted", t, 11));
    let t = stored_game_again(&pool, 6).await;
    crate::games::tamper::insert_copy_after(&pool, t, 12).await;
    cases.push(("inserted", t, 13));
    let t = stored_game_again(&pool, 7).await;
    let seq = crate::games::tamper::seq_of(&pool, t, "round_ended", 0).await;
    crate::games::tamper::edit_data(
        &pool,
        t,
        seq,
        "totals",
        serde_json::json!({"0": 1, "1": 2, "2": 3}),
    )
    .await;
    crate::games::tamper::rechain(&pool, t, seq).await;
    cases.push(("score", t, seq));

    for (kind, table, seq) in cases {
        let out = huit(&url, &["audit", &table.to_string()]);
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(2), "{kind}: {text}");
        assert!(
            text.contains(&format!("audit: FAILED (first bad seq {seq})")),
            "{kind}: {text}"
        );
    }
    let out = huit(&url, &["audit", &Uuid::new_v4().to_string()]);
    assert_eq!(out.status.code(), Some(1));
}

/// Another game with fresh accounts (usernames are unique).
async fn stored_game_again(pool: &PgPool, seed: u64) -> Uuid {
    let mut players = Vec::new();
    for i in 0..3 {
        let name = format!("p{seed}x{i}");
        let a = store::accounts::insert(pool, &name, "$argon2id$x", store::accounts::Role::Player)
            .await
            .unwrap();
        players.push((a.id, name));
    }
    let game = crate::games::play_game("moderne", serde_json::json!({"rounds": 2}), &players, seed);
    crate::games::store_table(pool, players[0].0, &game.batches).await
}
