//! Round history, replays, the NDJSON log, the event stream and the audit,
//! over HTTP, on logs generated in-process with the engine and stored with
//! the event store (the table endpoints are not used).

use std::time::Duration;

use api::log::hub::CommitHub;
use api::table_service::TableService;
use domain::table::{Table, TableEvent};
use domain::TableCommand;
use e2e::games::{self, tamper, PlayedGame};
use e2e::{
    assert_problem, eventually, frames, read_until, seqs, spawn_app, spawn_app_with, Cast, TestApp,
};
use serde_json::{json, Value};
use store::chain::{line_hash, GENESIS_PREV_HASH};
use uuid::Uuid;

async fn cast(app: &TestApp) -> Cast {
    Cast::new(app, &["ana", "bob", "cyd"], "eve", "boss").await
}

async fn get(app: &TestApp, path: &str, token: &str) -> reqwest::Response {
    app.get_as(path, token).await
}

async fn get_json(app: &TestApp, path: &str, token: &str) -> Value {
    let res = get(app, path, token).await;
    assert_eq!(res.status(), 200, "{path}");
    res.json().await.unwrap()
}

fn moderne(cast: &Cast, rounds: u32, seed: u64) -> PlayedGame {
    games::play_game("moderne", json!({"rounds": rounds}), &cast.players, seed)
}

fn round_ended(game: &PlayedGame, n: u32) -> domain::RoundEnded {
    game.events()
        .find_map(|e| match e {
            TableEvent::Game(domain::Event::RoundEnded(re)) if re.round == n => {
                Some(domain::RoundEnded::clone(re))
            }
            _ => None,
        })
        .unwrap()
}

fn by_seat<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap()
}

#[tokio::test]
async fn rounds_lists_finished_rounds_with_their_times_and_the_result_to_anyone_logged_in() {
    let app = spawn_app().await;
    let cast = cast(&app).await;
    let game = moderne(&cast, 2, 1);
    let table = games::store_table(&app.pool, cast.players[0].0, &game.batches).await;

    let body = get_json(&app, &format!("/v1/tables/{table}/rounds"), &cast.outsider).await;
    let rounds = body["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 2);
    for (i, r) in rounds.iter().enumerate() {
        let recorded = round_ended(&game, i as u32 + 1);
        assert_eq!(r["round"], i + 1);
        let dealer = game
            .events()
            .find_map(|e| match e {
                TableEvent::Game(domain::Event::RoundStarted(rs)) if rs.round == i as u32 + 1 => {
                    Some(rs.dealer)
                }
                _ => None,
            })
            .unwrap();
        assert_eq!(r["dealer"], dealer);
        assert_eq!(r["out_order"], by_seat(&recorded.out_order));
        // By seat, index = seat, as in replays (issue 28: one shape).
        let in_seat_order = |m: &std::collections::BTreeMap<usize, i32>| {
            serde_json::json!(m.values().collect::<Vec<_>>())
        };
        assert_eq!(r["points"], in_seat_order(&recorded.points));
        assert_eq!(r["totals"], in_seat_order(&recorded.totals));
        assert_eq!(r["cut_short"], false);
        let started = r["started_at"].as_str().unwrap();
        let ended = r["ended_at"].as_str().unwrap();
        assert!(started < ended, "{started} < {ended}");
    }
    let table_after = Table::from_events(game.events()).unwrap();
    let result = table_after.game.unwrap().result().cloned().unwrap();
    let mut expected = by_seat(&result);
    expected["corrected"] = Value::Null;
    assert_eq!(body["result"], expected, "the result, never corrected");

    // A game in its second round: one round, no result yet.
    let running =
        games::store_table(&app.pool, cast.players[0].0, &game.partway_into_round(2, 3)).await;
    let body = get_json(
        &app,
        &format!("/v1/tables/{running}/rounds"),
        &cast.tokens[1],
    )
    .await;
    assert_eq!(body["rounds"].as_array().unwrap().len(), 1);
    assert!(body["result"].is_null());

    let res = app
        .client
        .get(app.url(&format!("/v1/tables/{table}/rounds")))
        .send()
        .await
        .unwrap();
    assert_problem(res, 401, "unauthorized").await;
    let res = get(
        &app,
        &format!("/v1/tables/{}/rounds", Uuid::new_v4()),
        &cast.outsider,
    )
    .await;
    assert_problem(res, 404, "not_found").await;
}

#[tokio::test]
async fn replay_shows_every_hand_from_the_deal_and_refuses_steps_past_the_end() {
    let app = spawn_app().await;
    let cast = cast(&app).await;
    let game = moderne(&cast, 1, 2);
    let table = games::store_table(&app.pool, cast.players[0].0, &game.batches).await;
    let path = format!("/v1/tables/{table}/rounds/1/replay");

    let last = get_json(&app, &path, &cast.tokens[0]).await;
    let events = last["events"].as_array().unwrap();
    assert_eq!(events[0]["type"], "round_started");
    assert_eq!(events.last().unwrap()["type"], "round_ended");
    assert_eq!(last["step"], events.len() - 1);
    assert_eq!(last["last_step"], events.len() - 1);
    let deal = &events[0]["data"];
    assert_eq!(deal["hands"].as_object().unwrap().len(), 3, "every hand");
    assert!(deal["stock"].is_array(), "the stock in full");
    for key in ["seq", "type", "v", "at", "data", "prev_hash", "hash"] {
        assert!(events[1].get(key).is_some(), "{key} in {}", events[1]);
    }

    let first = get_json(&app, &format!("{path}?step=0"), &cast.tokens[0]).await;
    assert_eq!(first["step"], 0);
    for seat in 0..3 {
        assert_eq!(
            first["state"]["hands"][seat],
            deal["hands"][seat.to_string()]
        );
    }
    assert_eq!(first["state"]["top_card"], deal["starter"]);

    let res = get(
        &app,
        &format!("{path}?step={}", events.len()),
        &cast.tokens[0],
    )
    .await;
    let problem = assert_problem(res, 422, "step_out_of_range").await;
    assert!(problem["detail"].as_str().unwrap().contains("steps 0 to"));
    let res = get(&app, &format!("{path}?step=-1"), &cast.tokens[0]).await;
    assert_problem(res, 400, "invalid_query").await;
    let res = get(&app, &format!("{path}?step=abc"), &cast.tokens[0]).await;
    assert_problem(res, 400, "invalid_query").await;
    let res = get(
        &app,
        &format!("/v1/tables/{table}/rounds/2/replay"),
        &cast.tokens[0],
    )
    .await;
    assert_problem(res, 404, "not_found").await;
    let res = get(
        &app,
        &format!("/v1/tables/{}/rounds/1/replay", Uuid::new_v4()),
        &cast.admin,
    )
    .await;
    assert_problem(res, 404, "not_found").await;
}

#[tokio::test]
async fn replay_is_for_the_players_once_the_round_is_over_and_for_admins_at_any_time() {
    let app = spawn_app().await;
    let cast = cast(&app).await;
    let game = moderne(&cast, 3, 3);
    let table =
        games::store_table(&app.pool, cast.players[0].0, &game.partway_into_round(2, 4)).await;
    let round = |n: u32| format!("/v1/tables/{table}/rounds/{n}/replay");

    // Round 1 is over: its players may replay it, others may not.
    get_json(&app, &round(1), &cast.tokens[2]).await;
    let res = get(&app, &round(1), &cast.outsider).await;
    assert_problem(res, 403, "not_a_player").await;
    // Round 2 runs: never shown to a player, shown to an admin.
    for token in &cast.tokens {
        let res = get(&app, &round(2), token).await;
        assert_problem(res, 403, "round_running").await;
    }
    let res = get(&app, &round(2), &cast.outsider).await;
    assert_problem(res, 403, "not_a_player").await;
    let running = get_json(&app, &round(2), &cast.admin).await;
    assert!(
        running["state"]["current_seat"].is_u64(),
        "a seat is on turn"
    );
    assert_eq!(running["events"][0]["type"], "round_started");
}

#[tokio::test]
async fn replay_by_step_gives_the_recorded_hands_and_points_for_every_preset() {
    let app = spawn_app().await;
    let cast = cast(&app).await;
    for (i, preset) in domain::Preset::ALL.into_iter().enumerate() {
        let game = games::play_game(
            preset.id(),
            json!({"rounds": 1}),
            &cast.players,
            10 + i as u64,
        );
        let log: Vec<TableEvent> = game.events().cloned().collect();
        let table = games::store_table(&app.pool, cast.players[0].0, &game.batches).await;
        let start = log
            .iter()
            .position(|e| e.kind() == "round_started")
            .unwrap();
        let path = format!("/v1/tables/{table}/rounds/1/replay");
        let whole = get_json(&app, &path, &cast.tokens[1]).await;
        let last = whole["last_step"].as_u64().unwrap() as usize;
        // Steps (about 20 of them, always the first and the last) are the
        // engine's own fold of the log up to them.
        let stride = (last / 20).max(1);
        for step in (0..=last).filter(|k| k % stride == 0 || *k == last) {
            let body = get_json(&app, &format!("{path}?step={step}"), &cast.tokens[1]).await;
            let folded = Table::from_events(&log[..=start + step]).unwrap();
            let expected = folded.game.unwrap().full_view().unwrap();
            assert_eq!(
                body["state"],
                by_seat(&expected),
                "{} step {step}",
                preset.id()
            );
        }
        let state = &whole["state"];
        let recorded = round_ended(&game, 1);
        let hands: Vec<Value> = recorded.hands.values().map(by_seat).collect();
        assert_eq!(state["hands"], Value::from(hands), "{}", preset.id());
        let rules = preset.rules();
        let book = rules.compile().unwrap();
        let final_hands: Vec<Vec<domain::Card>> =
            serde_json::from_value(state["hands"].clone()).unwrap();
        let out: Vec<usize> = serde_json::from_value(state["out_order"].clone()).unwrap();
        let points = domain::score::round_points(&rules, &book, &final_hands, &out);
        let recorded_points: Vec<i32> = recorded.points.values().copied().collect();
        assert_eq!(points, recorded_points, "{}", preset.id());
        assert_eq!(
            state["totals"],
            by_seat(&recorded.totals.values().collect::<Vec<_>>())
        );
    }
}

/// Recomputes the chain from the NDJSON lines alone.
fn verify_lines(body: &str) -> usize {
    let mut prev = GENESIS_PREV_HASH.to_owned();
    let mut count = 0;
    for (i, line) in body.lines().enumerate() {
        let e: Value = serde_json::from_str(line).unwrap();
        assert_eq!(e["seq"], i + 1);
        assert_eq!(e["prev_hash"], prev.as_str());
        let hash = line_hash(&prev, &e).expect("a whole event");
        assert_eq!(e["hash"], hash.as_str(), "line {}", i + 1);
        prev = hash;
        count += 1;
    }
    count
}

#[tokio::test]
async fn log_is_ndjson_or_text_of_the_whole_log_in_pages_whose_hashes_recompute_and_that_huit_log_verify_passes(
) {
    let app = spawn_app().await;
    let cast = cast(&app).await;
    // Long enough to need several pages of the export.
    let game = moderne(&cast, 8, 4);
    let count = game.events().count();
    assert!(count > 2 * store::events::PAGE as usize, "{count} events");
    let table = games::store_table(&app.pool, cast.players[0].0, &game.batches).await;

    let res = get(&app, &format!("/v1/tables/{table}/log"), &cast.tokens[2]).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "application/x-ndjson");
    let body = res.text().await.unwrap();
    assert!(body.ends_with('\n'));
    assert_eq!(verify_lines(&body), count);
    let first: Value = serde_json::from_str(body.lines().next().unwrap()).unwrap();
    assert_eq!(first["type"], "table_created");
    let deal = body
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "round_started")
        .unwrap();
    assert_eq!(
        deal["data"]["hands"].as_object().unwrap().len(),
        3,
        "full data"
    );

    // The file a player saves, checked by `huit log verify` with no
    // database: every hash, every round re-scored, the game's end reached.
    let scratch = crate::support::process::Scratch::new("log-verify");
    let file = scratch.path("table.ndjson");
    std::fs::write(&file, &body).unwrap();
    let out = std::process::Command::new(crate::support::process::huit_bin())
        .args(["log", "verify"])
        .arg(&file)
        .env_remove("DATABASE_URL")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains(&format!("log verify: OK ({count} events")),
        "{said}"
    );

    // The same bytes as text to a client that asks for text alone (every
    // generator types the answer as a string; openapi-python-client reads
    // no other text), NDJSON to one that prefers it; the checked client
    // holds each line to the document's `x-itemSchema`.
    let url = app.url(&format!("/v1/tables/{table}/log"));
    for (accept, media_type) in [
        ("text/plain", "text/plain; charset=utf-8"),
        (
            "application/x-ndjson, text/plain;q=0.5",
            "application/x-ndjson",
        ),
        (
            "text/plain, application/x-ndjson",
            "text/plain; charset=utf-8",
        ),
    ] {
        let res = app
            .client
            .get(&url)
            .bearer_auth(&cast.tokens[2])
            .header("accept", accept)
            .send()
            .await
            .unwrap();
        assert_eq!(res.headers()["content-type"], media_type, "{accept}");
        assert_eq!(res.text().await.unwrap(), body, "{accept}");
    }
}

#[tokio::test]
async fn log_is_for_the_players_once_the_game_is_over_and_for_admins_at_any_time() {
    let app = spawn_app().await;
    let cast = cast(&app).await;
    let game = moderne(&cast, 2, 5);
    let running =
        games::store_table(&app.pool, cast.players[0].0, &game.partway_into_round(2, 2)).await;
    let log = |t: Uuid| format!("/v1/tables/{t}/log");

    let res = get(&app, &log(running), &cast.tokens[0]).await;
    assert_problem(res, 403, "game_running").await;
    let res = get(&app, &log(running), &cast.outsider).await;
    assert_problem(res, 403, "not_a_player").await;
    let res = get(&app, &log(running), &cast.admin).await;
    assert_eq!(res.status(), 200);
    verify_lines(&res.text().await.unwrap());

    let finished = games::store_table(&app.pool, cast.players[0].0, &game.batches).await;
    for token in &cast.tokens {
        assert_eq!(get(&app, &log(finished), token).await.status(), 200);
    }
    let res = get(&app, &log(finished), &cast.outsider).await;
    assert_problem(res, 403, "not_a_player").await;
    let res = get(&app, &log(Uuid::new_v4()), &cast.admin).await;
    assert_problem(res, 404, "not_found").await;
}

async fn audit(app: &TestApp, cast: &Cast, table: Uuid) -> Value {
    get_json(app, &format!("/v1/admin/tables/{table}/audit"), &cast.admin).await
}

/// A finished two-round game, stored, the append-only trigger off.
async fn tamperable(app: &TestApp, cast: &Cast, seed: u64) -> Uuid {
    let game = moderne(cast, 2, seed);
    let table = games::store_table(&app.pool, cast.players[0].0, &game.batches).await;
    tamper::allow_changes(&app.pool).await;
    table
}

fn assert_fails_at(report: &Value, seq: i64) {
    assert_eq!(report["ok"], false, "{report}");
    assert_eq!(report["first_bad_seq"], seq, "{report}");
}

#[tokio::test]
async fn audit_is_for_admins_and_passes_on_an_untouched_log() {
    let app = spawn_app().await;
    let cast = cast(&app).await;
    let table = tamperable(&app, &cast, 6).await;
    let path = format!("/v1/admin/tables/{table}/audit");
    for token in [&cast.tokens[0], &cast.outsider] {
        assert_problem(get(&app, &path, token).await, 403, "forbidden").await;
    }
    let res = get(
        &app,
        &format!("/v1/admin/tables/{}/audit", Uuid::new_v4()),
        &cast.admin,
    )
    .await;
    assert_problem(res, 404, "not_found").await;

    let report = audit(&app, &cast, table).await;
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(report["chain_valid"], true);
    assert!(report["first_bad_seq"].is_null());
    assert_eq!(report["problems"], json!([]));
    let rounds = report["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 2);
    for r in rounds {
        assert_eq!(r["matches"], true);
        assert_eq!(r["recorded"], r["recomputed"]);
    }
}

#[tokio::test]
async fn audit_names_the_seq_of_an_event_whose_data_was_edited() {
    let app = spawn_app().await;
    let cast = cast(&app).await;
    let table = tamperable(&app, &cast, 7).await;
    let seq = tamper::seq_of(&app.pool, table, "card_played", 10).await;
    tamper::edit_data(&app.pool, table, seq, "announce", json!(true)).await;
    let report = audit(&app, &cast, table).await;
    assert_fails_at(&report, seq);
    assert_eq!(report["chain_valid"], false);
}

#[tokio::test]
async fn audit_names_the_first_of_two_swapped_events() {
    let app = spawn_app().await;
    let cast = cast(&app).await;
    let table = tamperable(&app, &cast, 8).await;
    tamper::swap(&app.pool, table, 12, 13).await;
    let report = audit(&app, &cast, table).await;
    assert_fails_at(&report, 12);
    assert_eq!(report["chain_valid"], false);
}

#[tokio::test]
async fn audit_names_the_seq_of_a_deleted_event() {
    let app = spawn_app().await;
    let cast = cast(&app).await;
    let table = tamperable(&app, &cast, 9).await;
    tamper::delete(&app.pool, table, 20).await;
    let report = audit(&app, &cast, table).await;
    assert_fails_at(&report, 20);
    assert!(report["problems"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("missing"));
}

#[tokio::test]
async fn audit_names_the_seq_of_an_inserted_event() {
    let app = spawn_app().await;
    let cast = cast(&app).await;
    let table = tamperable(&app, &cast, 10).await;
    tamper::insert_copy_after(&app.pool, table, 15).await;
    let report = audit(&app, &cast, table).await;
    assert_fails_at(&report, 16);
}

#[tokio::test]
async fn audit_names_an_event_appended_past_the_tables_version_with_a_valid_chain() {
    let app = spawn_app().await;
    let cast = cast(&app).await;
    let table = tamperable(&app, &cast, 11).await;
    let version: i64 = sqlx::query_scalar("SELECT version FROM game_tables WHERE id = $1")
        .bind(table)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    tamper::insert_copy_after(&app.pool, table, version).await;
    tamper::rechain(&app.pool, table, version + 1).await;
    let report = audit(&app, &cast, table).await;
    assert_fails_at(&report, version + 1);
    assert_eq!(report["chain_valid"], false);
}

#[tokio::test]
async fn audit_fails_on_the_round_whose_recorded_score_was_edited_even_with_a_valid_chain() {
    let app = spawn_app().await;
    let cast = cast(&app).await;
    let table = tamperable(&app, &cast, 12).await;
    let seq = tamper::seq_of(&app.pool, table, "round_ended", 0).await;
    tamper::edit_data(
        &app.pool,
        table,
        seq,
        "points",
        json!({"0": 0, "1": 0, "2": 0}),
    )
    .await;
    tamper::rechain(&app.pool, table, seq).await;
    let report = audit(&app, &cast, table).await;
    assert_eq!(report["chain_valid"], true, "{report}");
    assert_fails_at(&report, seq);
    let round = &report["rounds"][0];
    assert_eq!(round["round"], 1);
    assert_eq!(round["seq"], seq);
    assert_eq!(round["matches"], false);
    assert_eq!(round["recorded"]["points"], json!({"0": 0, "1": 0, "2": 0}));
    assert_ne!(round["recomputed"]["points"], round["recorded"]["points"]);
}

#[tokio::test]
async fn audit_reports_data_that_no_longer_parses_at_its_seq_without_a_500() {
    let app = spawn_app().await;
    let cast = cast(&app).await;
    let table = tamperable(&app, &cast, 13).await;
    let seq = tamper::seq_of(&app.pool, table, "round_started", 0).await;
    tamper::garble(&app.pool, table, seq).await;
    let report = audit(&app, &cast, table).await;
    assert_fails_at(&report, seq);
    let reasons: Vec<&str> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["seq"] == seq)
        .map(|p| p["reason"].as_str().unwrap())
        .collect();
    assert!(
        reasons.iter().any(|r| r.contains("does not parse")),
        "{reasons:?}"
    );
    // A seat out of range makes the engine's evolve panic: reported too.
    let other = tamperable(&app, &cast, 14).await;
    let seq = tamper::seq_of(&app.pool, other, "card_played", 0).await;
    tamper::edit_data(&app.pool, other, seq, "seat", json!(7)).await;
    assert_fails_at(&audit(&app, &cast, other).await, seq);
}

#[tokio::test]
async fn waiters_see_a_commit_whose_announcement_was_lost_when_their_wait_ends() {
    let app = spawn_app_with(|s| s.sse_keepalive_ms = 300).await;
    let cast = cast(&app).await;
    let game = moderne(&cast, 2, 16);
    let first = game.partway_into_round(1, 2);
    let table = games::store_table(&app.pool, cast.players[0].0, &first).await;
    let version: usize = first.iter().map(Vec::len).sum();
    // This process caches the table at its version.
    let view = get_json(&app, &format!("/v1/tables/{table}/view"), &cast.tokens[1]).await;
    assert_eq!(view["version"], version);

    // Another process commits and dies before announcing it: this one has
    // heard nothing newer. A long poll finds the events when its wait ends.
    let mut batches = game.batches[first.len()..].iter();
    let more: Vec<_> = batches.by_ref().take(2).cloned().collect();
    let polled = games::append_unannounced(&app.pool, table, version as i64, &more).await;
    let page = get_json(
        &app,
        &format!("/v1/tables/{table}/events?after={version}&wait=1"),
        &cast.tokens[1],
    )
    .await;
    let polled_seqs = seqs(page["events"].as_array().unwrap());
    assert_eq!(
        polled_seqs,
        (version as i64 + 1..=polled).collect::<Vec<_>>()
    );

    // The same for an event stream, at its next keep-alive.
    let mut stream = app
        .client
        .get(app.url(&format!("/v1/tables/{table}/events/stream")))
        .bearer_auth(&cast.tokens[1])
        .header("Last-Event-ID", polled.to_string())
        .send()
        .await
        .unwrap();
    let mut text = String::new();
    read_until(&mut stream, &mut text, |t| t.contains(": events of table")).await;
    let more: Vec<_> = batches.by_ref().take(2).cloned().collect();
    let streamed = games::append_unannounced(&app.pool, table, polled, &more).await;
    read_until(&mut stream, &mut text, |t| {
        frames(t).last().and_then(|e| e["seq"].as_i64()) == Some(streamed)
    })
    .await;
    assert_eq!(frames(&text)[0]["seq"], polled + 1);
    drop(stream);

    // A long poll of the view with the ETag of a version made elsewhere
    // and not announced: never this process's older view, but a wait for
    // a newer one, a 304 at its end...
    let view_poll = |seen: i64| {
        app.client
            .get(app.url(&format!("/v1/tables/{table}/view?wait=1")))
            .bearer_auth(&cast.tokens[1])
            .header("if-none-match", format!("\"{seen}\""))
            .send()
    };
    let more: Vec<_> = batches.by_ref().take(2).cloned().collect();
    let seen = games::append_unannounced(&app.pool, table, streamed, &more).await;
    let res = view_poll(seen).await.unwrap();
    assert_eq!(res.status(), 304);
    assert_eq!(
        res.headers()["etag"].to_str().unwrap(),
        format!("\"{seen}\"")
    );
    // ... and a commit whose announcement was lost is found when it ends.
    let more: Vec<_> = batches.take(2).cloned().collect();
    let later = games::append_unannounced(&app.pool, table, seen, &more).await;
    let res = view_poll(seen).await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<Value>().await.unwrap()["version"], later);
}

#[tokio::test]
async fn event_stream_sends_redacted_events_wakes_on_commits_resumes_and_keeps_alive() {
    let app = spawn_app_with(|s| s.sse_keepalive_ms = 200).await;
    let cast = cast(&app).await;
    let game = moderne(&cast, 2, 15);
    let first = game.partway_into_round(1, 2);
    let table = games::store_table(&app.pool, cast.players[0].0, &first).await;
    let version: usize = first.iter().map(Vec::len).sum();
    let url = app.url(&format!("/v1/tables/{table}/events/stream"));

    let mut res = app
        .client
        .get(&url)
        .bearer_auth(&cast.tokens[1])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "text/event-stream");
    let mut text = String::new();
    read_until(&mut res, &mut text, |t| frames(t).len() == version).await;
    let seen = frames(&text);
    assert!(text.contains(&format!("id: {version}\n")));
    let deal = seen.iter().find(|e| e["type"] == "round_started").unwrap();
    let hands = deal["data"]["hands"].as_object().unwrap();
    assert_eq!(
        hands.keys().collect::<Vec<_>>(),
        ["1"],
        "only the caller's hand"
    );
    assert!(deal["data"].get("stock").is_none());
    assert_eq!(deal["hash"].as_str().unwrap().len(), 64);

    // Idle: keep-alive comments; a commit wakes the stream at once.
    read_until(&mut res, &mut text, |t| t.contains(": keep-alive")).await;
    let more = &game.batches[first.len()..first.len() + 3];
    let total = games::append(&app.pool, table, version as i64, more).await as usize;
    read_until(&mut res, &mut text, |t| frames(t).len() == total).await;
    assert_eq!(seqs(&frames(&text)), (1..=total as i64).collect::<Vec<_>>());

    // The client goes away: the server drops its subscription.
    drop(res);
    let gone = eventually(Duration::from_secs(10), || async {
        (app.hub.subscribers(table) == 0).then_some(())
    })
    .await;
    assert!(gone.is_some(), "the stream ended when the client left");

    // Resume after Last-Event-ID: only what follows.
    let mut res = app
        .client
        .get(&url)
        .bearer_auth(&cast.outsider)
        .header("Last-Event-ID", (total - 2).to_string())
        .send()
        .await
        .unwrap();
    let mut text = String::new();
    read_until(&mut res, &mut text, |t| frames(t).len() == 2).await;
    assert_eq!(seqs(&frames(&text)), [total as i64 - 1, total as i64]);

    // A spectator's stream (the cache now holds the table) shows no hand.
    let mut res = app
        .client
        .get(&url)
        .bearer_auth(&cast.outsider)
        .send()
        .await
        .unwrap();
    let mut text = String::new();
    read_until(&mut res, &mut text, |t| frames(t).len() == total).await;
    let seen = frames(&text);
    let deal = seen.iter().find(|e| e["type"] == "round_started").unwrap();
    assert_eq!(deal["data"]["hands"], json!({}), "no hand for a spectator");
    assert!(seen
        .iter()
        .filter(|e| e["type"] == "cards_drawn")
        .all(|e| e["data"].get("cards").is_none()));
    drop(res);

    let res = app
        .client
        .get(&url)
        .bearer_auth(&cast.outsider)
        .header("Last-Event-ID", "soon")
        .send()
        .await
        .unwrap();
    assert_problem(res, 400, "invalid_last_event_id").await;
    let res = get(
        &app,
        &format!("/v1/tables/{}/events/stream", Uuid::new_v4()),
        &cast.outsider,
    )
    .await;
    assert_problem(res, 404, "not_found").await;
}

#[tokio::test]
async fn view_stream_sends_the_callers_view_then_the_latest_at_each_change() {
    let app = spawn_app_with(|s| s.sse_keepalive_ms = 200).await;
    let cast = cast(&app).await;
    let game = moderne(&cast, 2, 15);
    let first = game.partway_into_round(1, 2);
    let table = games::store_table(&app.pool, cast.players[0].0, &first).await;
    let version = first.iter().map(Vec::len).sum::<usize>() as i64;
    let url = app.url(&format!("/v1/tables/{table}/view/stream"));
    let open = |token: &str, last: Option<String>| {
        let mut req = app.client.get(&url).bearer_auth(token);
        if let Some(last) = last {
            req = req.header("Last-Event-ID", last);
        }
        req.send()
    };
    let versions = |text: &str| -> Vec<i64> {
        frames(text)
            .iter()
            .map(|v| v["version"].as_i64().unwrap())
            .collect()
    };
    let mut batches = game.batches[first.len()..].iter().cloned();

    // At once: the caller's view, as `GET …/view` gives it.
    let mut res = open(&cast.tokens[1], None).await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "text/event-stream");
    let mut text = String::new();
    read_until(&mut res, &mut text, |t| frames(t).len() == 1).await;
    assert!(text.contains(&format!("id: {version}\n")), "{text}");
    let view = get_json(&app, &format!("/v1/tables/{table}/view"), &cast.tokens[1]).await;
    assert_eq!(frames(&text)[0], view);
    assert_eq!(view["my_seat"], 1);

    // Idle: keep-alive comments. A commit: the new view at once, one frame
    // however many events it holds.
    read_until(&mut res, &mut text, |t| t.contains(": keep-alive")).await;
    let one: Vec<_> = batches.by_ref().take(1).collect();
    let v2 = games::append(&app.pool, table, version, &one).await;
    read_until(&mut res, &mut text, |t| versions(t).last() == Some(&v2)).await;
    let two_moves: Vec<_> = batches.by_ref().take(2).flatten().collect();
    assert!(two_moves.len() > 1);
    let v3 = games::append(&app.pool, table, v2, &[two_moves]).await;
    read_until(&mut res, &mut text, |t| versions(t).last() == Some(&v3)).await;
    assert_eq!(versions(&text), [version, v2, v3]);
    let view = get_json(&app, &format!("/v1/tables/{table}/view"), &cast.tokens[1]).await;
    assert_eq!(frames(&text).last().unwrap(), &view);

    // A commit whose announcement was lost: found at the next keep-alive.
    let lost: Vec<_> = batches.by_ref().take(1).collect();
    let v4 = games::append_unannounced(&app.pool, table, v3, &lost).await;
    read_until(&mut res, &mut text, |t| versions(t).last() == Some(&v4)).await;

    // The client goes away: the server drops its subscription.
    drop(res);
    let gone = eventually(Duration::from_secs(10), || async {
        (app.hub.subscribers(table) == 0).then_some(())
    })
    .await;
    assert!(gone.is_some(), "the stream ended when the client left");

    // Resumed with the version the client has: nothing until a change. A
    // spectator's view has no hand and no moves.
    let mut res = open(&cast.outsider, Some(v4.to_string())).await.unwrap();
    let mut text = String::new();
    read_until(&mut res, &mut text, |t| t.contains(": keep-alive")).await;
    assert!(frames(&text).is_empty(), "{text}");
    let one: Vec<_> = batches.by_ref().take(1).collect();
    let v5 = games::append(&app.pool, table, v4, &one).await;
    read_until(&mut res, &mut text, |t| !frames(t).is_empty()).await;
    let spectator = &frames(&text)[0];
    assert_eq!(spectator["version"], v5);
    assert_eq!(spectator["my_seat"], Value::Null);
    assert_eq!(spectator["hand"], json!([]));
    assert_eq!(spectator["legal_moves"], json!([]));
    drop(res);

    // An older version than the table's: the view at once.
    let mut res = open(&cast.outsider, Some((v5 - 1).to_string()))
        .await
        .unwrap();
    let mut text = String::new();
    read_until(&mut res, &mut text, |t| !frames(t).is_empty()).await;
    assert_eq!(versions(&text), [v5]);
    drop(res);

    let res = open(&cast.outsider, Some("soon".into())).await.unwrap();
    assert_problem(res, 400, "invalid_last_event_id").await;
    let res = get(
        &app,
        &format!("/v1/tables/{}/view/stream", Uuid::new_v4()),
        &cast.outsider,
    )
    .await;
    assert_problem(res, 404, "not_found").await;
}

/// A game of two rounds stored up to round 1's deal: the game, its table,
/// its version.
async fn stored_at_first_deal(app: &TestApp, cast: &Cast) -> (PlayedGame, Uuid, usize) {
    let game = moderne(cast, 2, 15);
    let first = game.partway_into_round(1, 0);
    let table = games::store_table(&app.pool, cast.players[0].0, &first).await;
    let version = first.iter().map(Vec::len).sum();
    (game, table, version)
}

/// Long polls answered from the table cache's recent events: in whatever
/// order the players and a spectator ask for the same events, each sees its
/// own hand and its own draws only.
#[tokio::test]
async fn long_polls_show_each_player_its_own_hand_and_draws_whoever_asks_first() {
    let app = spawn_app().await;
    let cast = cast(&app).await;
    let (game, table, version) = stored_at_first_deal(&app, &cast).await;
    // The table is cached; what follows joins the cache's recent events.
    get_json(&app, &format!("/v1/tables/{table}/view"), &cast.outsider).await;
    let dealt = game.partway_into_round(1, 0).len();
    let more = &game.batches[dealt..(dealt + 40).min(game.batches.len())];
    games::append(&app.pool, table, version as i64, more).await;

    let path = format!("/v1/tables/{table}/events?after={version}&limit=500");
    let seat_tokens = cast.tokens.iter().map(Some).enumerate();
    let askers: Vec<(Option<usize>, &String)> = seat_tokens
        .clone()
        .map(|(s, t)| (Some(s), t.unwrap()))
        .chain([(None, &cast.outsider)])
        .chain(seat_tokens.rev().map(|(s, t)| (Some(s), t.unwrap())))
        .collect();
    let mut draws = 0;
    for (seat, token) in askers {
        let page = get_json(&app, &path, token).await;
        for e in page["events"].as_array().unwrap() {
            match e["type"].as_str().unwrap() {
                "round_started" => {
                    let hands = e["data"]["hands"].as_object().unwrap();
                    let shown: Vec<String> = hands.keys().cloned().collect();
                    let own: Vec<String> = seat.iter().map(usize::to_string).collect();
                    assert_eq!(shown, own, "{seat:?}");
                }
                "cards_drawn" => {
                    draws += 1;
                    let own = seat.is_some_and(|s| e["data"]["seat"] == s);
                    assert_eq!(e["data"].get("cards").is_some(), own, "{seat:?}: {e}");
                }
                _ => {}
            }
        }
    }
    assert!(draws > 0, "the moves include draws");
}

/// A move whose request is dropped while its events are being written
/// (the client gone, the worker stopping) leaves the cached table in
/// doubt: its next use reads the log, which is the truth, instead of
/// serving the events the move took, which may never be stored.
#[tokio::test]
async fn a_move_dropped_while_written_leaves_nothing_in_the_cache() {
    let app = spawn_app().await;
    let cast = cast(&app).await;
    let (_, table, version) = stored_at_first_deal(&app, &cast).await;
    let version = version as i64;
    let tables = TableService::new(app.pool.clone(), CommitHub::new());
    let (seat, mv) = tables
        .read(table, 0, |l| {
            let g = l.table.game.as_ref().unwrap();
            let seat = g.round().unwrap().current.unwrap();
            (seat, g.legal_moves(seat).remove(0))
        })
        .await
        .unwrap();
    let command = TableCommand::Move {
        account_id: api::table_service::player_id(cast.players[seat].0),
        mv,
    };

    // Another process holds the table's row: the move's statement waits.
    let mut other = app.pool.begin().await.unwrap();
    sqlx::query("SELECT 1 FROM game_tables WHERE id = $1 FOR UPDATE")
        .bind(table)
        .execute(&mut *other)
        .await
        .unwrap();
    let acting = tokio::spawn({
        let tables = tables.clone();
        async move {
            tables
                .act(table, &command, None, None, |_, _, _| Ok(()))
                .await
        }
    });
    let waiting = eventually(Duration::from_secs(10), || async {
        let n: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity
             WHERE wait_event_type = 'Lock' AND query LIKE 'WITH moved AS%'",
        )
        .fetch_one(&app.pool)
        .await
        .unwrap();
        (n == 1).then_some(())
    })
    .await;
    assert!(waiting.is_some(), "the move's statement waits for the row");
    acting.abort();
    assert!(acting.await.unwrap_err().is_cancelled());
    // The other process moves the table first: the move is not stored.
    sqlx::query("UPDATE game_tables SET version = version + 1000 WHERE id = $1")
        .bind(table)
        .execute(&mut *other)
        .await
        .unwrap();
    other.commit().await.unwrap();
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM events WHERE table_id = $1")
        .bind(table)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(stored, version, "nothing of the move was written");

    let cached = tables.read(table, 0, |l| l.version()).await.unwrap();
    assert_eq!(cached, version, "the table as its log says");
}

/// A process's first use of a table folds its whole log, read by one
/// `COPY` and handed to the folding thread in batches of rows: a log of
/// several batches folds to the table that was played, and an event past
/// the first batch that does not parse fails the load, naming it.
#[tokio::test]
async fn a_log_of_several_batches_folds_cold_to_the_table_played_and_a_bad_event_fails_it() {
    let app = spawn_app().await;
    let cast = cast(&app).await;
    let game = moderne(&cast, 40, 5);
    let events: Vec<&TableEvent> = game.events().collect();
    assert!(events.len() > 3 * 1024, "{} events", events.len());
    let played = Table::from_events(events).unwrap();
    let table = games::store_table(&app.pool, cast.players[0].0, &game.batches).await;

    let cold = TableService::new(app.pool.clone(), CommitHub::new());
    let folded = cold.read(table, 0, |l| l.table.clone()).await.unwrap();
    assert_eq!(folded, played);

    tamper::allow_changes(&app.pool).await;
    tamper::garble(&app.pool, table, 2500).await;
    let cold = TableService::new(app.pool.clone(), CommitHub::new());
    let refused = cold.read(table, 0, |l| l.version()).await.unwrap_err();
    let why = std::error::Error::source(&refused).map(ToString::to_string);
    assert!(
        why.as_ref().is_some_and(|w| w.contains("event 2500 ")),
        "{why:?}"
    );
}
