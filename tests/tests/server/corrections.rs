//! Corrections of a finished game's result (docs/API.md "Corrections and
//! sanctions"), over HTTP: an upheld dispute appends `result_corrected` to
//! the table's log, the audit recomputes it, `/rounds` shows it beside the
//! original, the game and the later ones are rated again exactly as a
//! rebuild from the logs rates them, and every player is told.

use crate::feed::feed;
use crate::ratings::{play_out, profile, rebuilt_the_same};
use crate::support::{get, json_of, post, post_empty, seated_table, start, view};
use std::time::Duration;

use e2e::{assert_problem, eventually, spawn_app, Cast, TestApp};
use serde_json::{json, Value};

/// A `moderne` game of two rounds its players played to the end, rated.
async fn finished(app: &TestApp, cast: &Cast) -> String {
    let seated: Vec<&str> = cast.tokens.iter().map(String::as_str).collect();
    let options = json!({"rounds": 2});
    let id = seated_table(app, &seated, "moderne", options, seated.len() as u32).await;
    start(app, &cast.tokens[0], &id).await;
    play_out(app, &cast.tokens, &id).await;
    id
}

/// Files a dispute about the game of `id` as `token`; its id.
async fn dispute(app: &TestApp, token: &str, id: &str) -> String {
    let body = json!({"reason": "The scores are wrong"});
    let filed = json_of(
        post(app, token, &format!("/v1/tables/{id}/disputes"), &body).await,
        201,
    )
    .await;
    filed["id"].as_str().unwrap().to_owned()
}

/// A player of the table (`token`) disputes its game, and the admin upholds
/// it with `correction`: the resolved dispute.
async fn correct(app: &TestApp, cast: &Cast, token: &str, id: &str, correction: Value) -> Value {
    let d = dispute(app, token, id).await;
    let body = upheld(correction);
    json_of(post(app, &cast.admin, &resolution(&d), &body).await, 200).await
}

fn resolution(dispute: &str) -> String {
    format!("/v1/admin/disputes/{dispute}/resolution")
}

fn upheld(correction: Value) -> Value {
    json!({"verdict": "upheld", "note": "Corrected after review.", "correction": correction})
}

/// The table's whole log, as its players export it.
pub(crate) async fn log_of(app: &TestApp, token: &str, id: &str) -> Vec<Value> {
    let res = get(app, token, &format!("/v1/tables/{id}/log")).await;
    let text = res.text().await.unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The game's stored ratings by seat: each player's mean before and after.
async fn stored_ratings(app: &TestApp, id: &str) -> Vec<(f64, f64)> {
    sqlx::query_as(
        "SELECT mu_before, mu_after FROM rated_results WHERE table_id = $1::uuid ORDER BY seat",
    )
    .bind(id)
    .fetch_all(&app.pool)
    .await
    .unwrap()
}

/// A previewed rating from one game, `{before, after}`.
fn moved(m: &Value) -> (f64, f64) {
    (m["before"].as_f64().unwrap(), m["after"].as_f64().unwrap())
}

/// A fresh audit of the table, as an admin asks for it.
pub(crate) async fn audit(app: &TestApp, cast: &Cast, id: &str) -> Value {
    let url = format!("/v1/admin/tables/{id}/audit?fresh=true");
    json_of(get(app, &cast.admin, &url).await, 200).await
}

#[tokio::test]
async fn an_upheld_dispute_corrects_the_result_in_the_log_re_rates_exactly_and_tells_everyone() {
    let app = spawn_app().await;
    let cast = Cast::new(&app, &["ines", "joao", "kurt"], "lena", "marc").await;
    let id = finished(&app, &cast).await;
    let ines = &cast.tokens[0];
    let before = log_of(&app, ines, &id).await;
    let rounds = json_of(
        get(&app, ines, &format!("/v1/tables/{id}/rounds")).await,
        200,
    )
    .await;
    let original = rounds["result"].clone();
    assert_eq!(original["corrected"], Value::Null);
    let games_before = profile(&app, "ines").await;

    // Round 1's points as the admin sets them: the winner takes 500 more.
    let winner = original["winners"][0].as_u64().unwrap() as usize;
    let mut points: Vec<i64> = rounds["rounds"][0]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_i64().unwrap())
        .collect();
    points[winner] += 500;
    let correction = json!({"kind": "points", "round": 1, "points": points});
    let done = correct(&app, &cast, ines, &id, correction.clone()).await;
    assert_eq!(done["correction"], correction);
    let d = done["id"].as_str().unwrap().to_owned();

    // Appended after the game's end, chained to it; nothing before changes.
    let after = log_of(&app, ines, &id).await;
    assert_eq!(after.len(), before.len() + 1);
    assert_eq!(after[..before.len()], before[..]);
    let last = &after[before.len()];
    assert_eq!(last["type"], "result_corrected");
    assert_eq!(last["prev_hash"], before.last().unwrap()["hash"]);
    let data = &last["data"];
    assert_eq!(
        (&data["dispute_id"], &data["correction"]),
        (&json!(d), &correction)
    );
    assert_eq!(data["rated"], true);
    assert_ne!(
        data["winners"], original["winners"],
        "500 more points lose a lowest-wins game"
    );
    let report = audit(&app, &cast, &id).await;
    assert_eq!(report["ok"], true, "{report:#}");

    // The rounds show the corrected result beside the original.
    let rounds = json_of(
        get(&app, ines, &format!("/v1/tables/{id}/rounds")).await,
        200,
    )
    .await;
    assert_eq!(rounds["result"]["ranking"], original["ranking"]);
    assert_eq!(rounds["result"]["corrected"]["ranking"], data["ranking"]);
    // So does each player's view of the table.
    let seen = view(&app, &cast.tokens[1], &id).await;
    assert_eq!(seen["result"]["ranking"], original["ranking"]);
    assert_eq!(
        (
            &seen["corrected"]["ranking"],
            &seen["corrected"]["dispute_id"]
        ),
        (&data["ranking"], &json!(d))
    );
    let replay = json_of(
        get(&app, ines, &format!("/v1/tables/{id}/rounds/1/replay")).await,
        200,
    )
    .await;
    assert_eq!(replay["corrected"]["correction"], correction);

    // Rated as if the game had ended so: what a rebuild from the logs says.
    assert_eq!(rebuilt_the_same(&app).await, 1);

    // Everyone is told, and the filer reads the verdict with its correction.
    for token in &cast.tokens {
        let items = feed(&app, token).await;
        assert!(
            items
                .iter()
                .any(|i| i["kind"] == "result_corrected" && i["table_id"] == json!(id)),
            "{items:#?}"
        );
    }
    let mine = json_of(get(&app, ines, "/v1/me/disputes").await, 200).await;
    assert_eq!(mine["disputes"][0]["correction"], correction, "{mine:#}");

    // Voided: it counts for no one; then the original result again. The
    // last correction stands, every one stays in the log.
    correct(&app, &cast, ines, &id, json!({"kind": "void"})).await;
    assert_eq!(rebuilt_the_same(&app).await, 0);
    let games = |p: &Value| {
        let stats = p["stats"].as_array().unwrap();
        let moderne = stats.iter().find(|s| s["ruleset"] == "moderne");
        moderne.map_or(0, |s| s["games"].as_i64().unwrap())
    };
    assert_eq!(games(&games_before), 1);
    assert_eq!(games(&profile(&app, "ines").await), 0, "no rated game left");
    correct(&app, &cast, ines, &id, json!({"kind": "none"})).await;
    assert_eq!(rebuilt_the_same(&app).await, 1);
    assert_eq!(profile(&app, "ines").await, games_before);
    let log = log_of(&app, ines, &id).await;
    let kinds: Vec<&str> = log[before.len()..]
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["result_corrected"; 3]);
    assert_eq!(audit(&app, &cast, &id).await["ok"], true);
}

#[tokio::test]
async fn a_disqualified_seat_is_ranked_last_and_the_others_move_up() {
    let app = spawn_app().await;
    let cast = Cast::new(&app, &["nora", "omar", "pia"], "quin", "rosa").await;
    let id = finished(&app, &cast).await;
    let rounds = json_of(
        get(&app, &cast.tokens[0], &format!("/v1/tables/{id}/rounds")).await,
        200,
    )
    .await;
    let first = rounds["result"]["ranking"][0]["seat"].clone();
    let disqualify = json!({"kind": "disqualify", "seat": first});

    // Previewed first: the ranking it makes, and each player's rating from
    // the game now and once corrected; nothing is written.
    let d = dispute(&app, &cast.tokens[1], &id).await;
    let before = log_of(&app, &cast.tokens[0], &id).await;
    let stored_before = stored_ratings(&app, &id).await;
    let preview = json_of(
        post(
            &app,
            &cast.admin,
            &format!("/v1/admin/disputes/{d}/preview"),
            &json!({"correction": disqualify}),
        )
        .await,
        200,
    )
    .await;
    let previewed = &preview["corrected"];
    assert_eq!(previewed["ranking"][2]["seat"], first, "{preview:#}");
    let seats = preview["ratings"].as_array().unwrap();
    assert_eq!(seats.len(), 3, "{preview:#}");
    let now: Vec<(f64, f64)> = seats.iter().map(|s| moved(&s["now"])).collect();
    assert_eq!(now, stored_before);
    assert!(seats.iter().all(|s| s["username"].is_string()));
    let first_seat = first.as_u64().unwrap() as usize;
    assert!(
        moved(&seats[first_seat]["corrected"]).1 < now[first_seat].1,
        "the disqualified winner ends lower: {preview:#}"
    );
    assert_eq!(log_of(&app, &cast.tokens[0], &id).await, before);
    assert_eq!(stored_ratings(&app, &id).await, stored_before);
    assert_problem(
        post(
            &app,
            &cast.tokens[0],
            &format!("/v1/admin/disputes/{d}/preview"),
            &json!({"correction": {"kind": "void"}}),
        )
        .await,
        403,
        "forbidden",
    )
    .await;

    let body = upheld(disqualify);
    json_of(post(&app, &cast.admin, &resolution(&d), &body).await, 200).await;
    // Applied, it stores what the preview said.
    let corrected: Vec<(f64, f64)> = seats.iter().map(|s| moved(&s["corrected"])).collect();
    assert_eq!(stored_ratings(&app, &id).await, corrected);
    let rounds = json_of(
        get(&app, &cast.tokens[0], &format!("/v1/tables/{id}/rounds")).await,
        200,
    )
    .await;
    let corrected = &rounds["result"]["corrected"];
    let ranking = corrected["ranking"].as_array().unwrap();
    assert_eq!(ranking.last().unwrap()["seat"], first);
    assert_eq!(ranking.last().unwrap()["place"], 3);
    assert!(corrected["losers"].as_array().unwrap().contains(&first));
    assert!(!corrected["winners"].as_array().unwrap().contains(&first));
    // The table's summary shows it beside the original too.
    let summary = json_of(
        get(&app, &cast.tokens[2], &format!("/v1/tables/{id}")).await,
        200,
    )
    .await;
    assert_eq!(summary["result"]["corrected"], *corrected);
    assert_eq!(summary["result"]["ranking"][0]["seat"], first);
    assert_eq!(rebuilt_the_same(&app).await, 1);
    assert_eq!(audit(&app, &cast, &id).await["ok"], true);
}

#[tokio::test]
async fn a_correction_is_refused_for_a_running_or_aborted_game_a_wrong_one_and_a_non_admin() {
    let app = spawn_app().await;
    let cast = Cast::new(&app, &["sven", "tara"], "ugo", "vera").await;
    let seated: Vec<&str> = cast.tokens.iter().map(String::as_str).collect();
    let void = upheld(json!({"kind": "void"}));

    // A game that finished: the wrong corrections, and a player's.
    let id = finished(&app, &cast).await;
    let d = dispute(&app, &cast.tokens[0], &id).await;
    let before = log_of(&app, &cast.tokens[0], &id).await;
    assert_problem(
        post(&app, &cast.tokens[0], &resolution(&d), &void).await,
        403,
        "forbidden",
    )
    .await;
    let rejected = json!({"verdict": "rejected", "note": "No.", "correction": {"kind": "void"}});
    for (body, code) in [
        (rejected, "invalid_correction"),
        (
            upheld(json!({"kind": "points", "round": 9, "points": [0, 0]})),
            "invalid_correction",
        ),
        (
            upheld(json!({"kind": "points", "round": 1, "points": [0]})),
            "invalid_correction",
        ),
        (
            upheld(json!({"kind": "disqualify", "seat": 2})),
            "invalid_correction",
        ),
        (upheld(json!({"kind": "forfeit"})), "invalid_body"),
        (upheld(json!({"kind": "void", "seat": 1})), "invalid_body"),
    ] {
        assert_problem(
            post(&app, &cast.admin, &resolution(&d), &body).await,
            422,
            code,
        )
        .await;
    }
    assert_eq!(
        log_of(&app, &cast.tokens[0], &id).await,
        before,
        "nothing changed"
    );
    let open = json_of(
        get(&app, &cast.admin, &format!("/v1/admin/disputes/{d}")).await,
        200,
    )
    .await;
    assert_eq!(
        open["status"], "open",
        "a refused correction resolves nothing"
    );

    // A round's dispute while the game runs.
    let running = seated_table(&app, &seated, "moderne", json!({"rounds": 3}), 2).await;
    start(&app, &cast.tokens[0], &running).await;
    let partway = until_round_two(&app, &cast, &running).await;
    let body = json!({"round": 1, "reason": "Round 1 was miscounted"});
    let filed = json_of(
        post(
            &app,
            &cast.tokens[0],
            &format!("/v1/tables/{running}/disputes"),
            &body,
        )
        .await,
        201,
    )
    .await;
    let d = filed["id"].as_str().unwrap();
    assert_problem(
        post(&app, &cast.admin, &resolution(d), &void).await,
        409,
        "game_running",
    )
    .await;
    assert_eq!(partway, log_of(&app, &cast.admin, &running).await.len());

    // An aborted game has no result to correct.
    let aborted = seated_table(&app, &seated, "moderne", json!({}), 2).await;
    start(&app, &cast.tokens[0], &aborted).await;
    let abort = format!("/v1/tables/{aborted}/abort");
    json_of(post_empty(&app, &cast.tokens[0], &abort).await, 200).await;
    let d = dispute(&app, &cast.tokens[1], &aborted).await;
    assert_problem(
        post(&app, &cast.admin, &resolution(&d), &void).await,
        409,
        "game_aborted",
    )
    .await;
}

/// Plays the table `id` until its round 2 runs; the log's length then.
async fn until_round_two(app: &TestApp, cast: &Cast, id: &str) -> usize {
    loop {
        let log = log_of(app, &cast.admin, id).await;
        let started = log.iter().filter(|e| e["type"] == "round_started").count();
        if started >= 2 {
            return log.len();
        }
        let v = crate::support::view(app, &cast.tokens[0], id).await;
        let seat = v["current_seat"].as_u64().expect("a seat on turn") as usize;
        let mine = crate::support::view(app, &cast.tokens[seat], id).await;
        let (mv, version) = (&mine["legal_moves"][0], mine["version"].as_i64());
        json_of(
            crate::support::play(app, &cast.tokens[seat], id, mv, version).await,
            200,
        )
        .await;
    }
}

#[tokio::test]
async fn a_game_ending_while_its_rulesets_ratings_are_recomputed_is_not_held_back() {
    let app = spawn_app().await;
    let cast = Cast::new(&app, &["wade", "xena", "yuri"], "zora", "abel").await;
    // Another transaction holds moderne's ratings, as a correction
    // re-rating thousands of later games does.
    let mut busy = app.pool.begin().await.unwrap();
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended('huit.ratings.moderne', 0))")
        .execute(&mut *busy)
        .await
        .unwrap();
    let played = tokio::time::timeout(Duration::from_secs(20), finished(&app, &cast)).await;
    let id = played.expect("the game's last move is not held back by the ratings");
    let deferred: i64 =
        sqlx::query_scalar("SELECT count(*) FROM ratings_deferred WHERE table_id = $1::uuid")
            .bind(&id)
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!(deferred, 1, "noted for the rater, with the move");
    assert_eq!(profile(&app, "wade").await["stats"], json!([]));

    // Once the lock is free, the rater rates it in its place.
    busy.rollback().await.unwrap();
    let rated = eventually(Duration::from_secs(10), || async {
        let stats = profile(&app, "wade").await["stats"].clone();
        (stats != json!([])).then_some(stats)
    })
    .await
    .expect("rated by the rater");
    assert_eq!(rated[0]["games"], 1);
    assert_eq!(rebuilt_the_same(&app).await, 1);
}
