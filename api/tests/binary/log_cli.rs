//! `huit log verify` and `huit log replay` on exported logs, with no
//! database: a game of every preset, stored, then exported line by line as
//! `GET …/log` sends it, and damaged each way a file can be.

use std::process::Output;

use sqlx::PgPool;

/// Every preset, with a target that ends its game in a few rounds.
const PRESETS: [(&str, u32); 5] = [
    ("classique", 60),
    ("moderne", 60),
    ("base", 30),
    ("amerix", 40),
    ("757", 40),
];

async fn pool() -> PgPool {
    crate::support::migrated_database().await.1
}

/// A finished game of `ruleset` between three new accounts, stored, then
/// exported: one JSON line per event.
async fn exported(pool: &PgPool, ruleset: &str, target: u32, seed: u64) -> Vec<String> {
    let mut players = Vec::new();
    for i in 0..3 {
        let name = format!(
            "l{}{seed}x{i}",
            &uuid::Uuid::new_v4().simple().to_string()[..6]
        );
        let a = store::accounts::insert(pool, &name, "$argon2id$x", store::accounts::Role::Player)
            .await
            .unwrap();
        players.push((a.id, name));
    }
    let options = serde_json::json!({ "target": target });
    let game = crate::games::play_game(ruleset, options, &players, seed);
    let table = crate::games::store_table(pool, players[0].0, &game.batches).await;
    let events = store::events::read_after(pool, table, 0, 100_000)
        .await
        .unwrap();
    events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap())
        .collect()
}

/// `huit log <args>` with `stdin`, and no database to reach.
fn huit_log(args: &[&str], stdin: &str) -> Output {
    let mut all = vec!["log"];
    all.extend_from_slice(args);
    crate::support::huit_with_stdin(&all, None, stdin)
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// `huit log verify -` on `lines`: its exit code and what it said.
fn verify(lines: &[String], extra: &[&str]) -> (Option<i32>, String) {
    let mut args = vec!["verify", "-"];
    args.extend_from_slice(extra);
    let out = huit_log(&args, &(lines.join("\n") + "\n"));
    (out.status.code(), text(&out))
}

/// Event `seq`'s line, parsed.
fn event(lines: &[String], seq: usize) -> serde_json::Value {
    serde_json::from_str(&lines[seq - 1]).unwrap()
}

#[tokio::test]
async fn an_exported_log_of_every_preset_verifies_without_a_database() {
    let pool = pool().await;
    for (i, (ruleset, target)) in PRESETS.into_iter().enumerate() {
        let lines = exported(&pool, ruleset, target, 40 + i as u64).await;
        let (code, said) = verify(&lines, &[]);
        assert_eq!(code, Some(0), "{ruleset}: {said}");
        assert!(said.contains("log verify: OK"), "{ruleset}: {said}");
        assert!(said.contains("hash chain: valid"), "{ruleset}: {said}");
        assert!(said.contains("rounds re-scored"), "{ruleset}: {said}");
    }
}

#[tokio::test]
async fn a_damaged_log_fails_naming_its_first_bad_line() {
    let pool = pool().await;
    let lines = exported(&pool, "moderne", 60, 7).await;
    let n = lines.len();

    // Cut at a line's end: every hash holds, but the game never ends.
    let (code, said) = verify(&lines[..n - 3], &[]);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("ends before the game did"), "{said}");
    assert!(
        said.contains(&format!("first bad line {}", n - 2)),
        "{said}"
    );
    // … which --partial accepts, as an admin's export of a running game.
    let (code, said) = verify(&lines[..n - 3], &["--partial"]);
    assert_eq!(code, Some(0), "{said}");

    // Cut inside a line.
    let mut cut = lines[..n - 1].to_vec();
    cut.push(lines[n - 1][..lines[n - 1].len() / 2].to_owned());
    let (code, said) = verify(&cut, &[]);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains(&format!("line {n}: not an event")), "{said}");

    // Two lines swapped.
    let mut swapped = lines.clone();
    swapped.swap(9, 10);
    let (code, said) = verify(&swapped, &[]);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("first bad line 10"), "{said}");

    // A round's recorded totals forged, and every hash after it recomputed
    // so that the chain holds: the scores, re-folded, do not.
    let ended = (1..=n)
        .find(|&seq| event(&lines, seq)["type"] == "round_ended")
        .expect("a round ended");
    let mut forged: Vec<serde_json::Value> = (1..=n).map(|seq| event(&lines, seq)).collect();
    let totals = forged[ended - 1]["data"]["totals"].clone();
    let mut changed = totals.clone();
    changed["0"] = serde_json::json!(totals["0"].as_i64().unwrap() + 1);
    forged[ended - 1]["data"]["totals"] = changed;
    let mut prev = forged[ended - 2]["hash"].as_str().unwrap().to_owned();
    for e in &mut forged[ended - 1..] {
        e["prev_hash"] = serde_json::json!(prev);
        let hash = store::chain::line_hash(&prev, e).expect("a whole event");
        e["hash"] = serde_json::json!(hash);
        prev = hash;
    }
    let forged: Vec<String> = forged.iter().map(|e| e.to_string()).collect();
    let (code, said) = verify(&forged, &[]);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("hash chain: valid"), "re-chained: {said}");
    assert!(said.contains("MISMATCH"), "{said}");
    assert!(said.contains(&format!("first bad line {ended}")), "{said}");

    // A file that is not there: 1, not 2.
    let out = huit_log(&["verify", "/nonexistent/log.ndjson"], "");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
}

#[tokio::test]
async fn an_exported_log_replays_a_round_step_by_step_without_a_database() {
    let pool = pool().await;
    let lines = exported(&pool, "classique", 60, 3).await;
    let out = huit_log(&["replay", "-", "--round", "1"], &lines.join("\n"));
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("log - (classique), round 1: seat 0 account "),
        "{said}"
    );
    assert!(said.contains("round_started: round 1"), "{said}");
    assert!(said.contains("hand sizes ["), "{said}");
    let out = huit_log(&["replay", "-", "--round", "99"], &lines.join("\n"));
    assert!(!out.status.success());
    assert!(text(&out).contains("no round 99"), "{}", text(&out));
}
