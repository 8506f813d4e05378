//! A player's feed (docs/API.md "Finding a game and coming back"): its
//! items and their badge, its long poll woken across processes, its stream,
//! the turn's alarm at 80 % of the clock, its limits and its retention.
//! Its webhooks are in `webhooks`.

use std::time::Duration;

use crate::support::{get, json_of, play, players, post, post_empty, spawn_second_process, view};
use e2e::{assert_problem, eventually, frames, read_until, spawn_app, spawn_app_with, TestApp};
use serde_json::{json, Value};

/// A started two-player `classique` table of `a` (seat 0) and `b`, with
/// `clock` if any.
pub async fn two_player_table(app: &TestApp, a: &str, b: &str, clock: Option<Value>) -> String {
    let mut body = json!({"ruleset": "classique", "seats": 2, "options": {"target": 100000}});
    if let Some(clock) = clock {
        body["clock"] = clock;
    }
    let table = json_of(post(app, a, "/v1/tables", &body).await, 201).await;
    let id = table["id"].as_str().unwrap().to_owned();
    json_of(
        post_empty(app, b, &format!("/v1/tables/{id}/players")).await,
        200,
    )
    .await;
    json_of(
        post_empty(app, a, &format!("/v1/tables/{id}/start")).await,
        200,
    )
    .await;
    id
}

/// The whole feed of `token`.
pub async fn feed(app: &TestApp, token: &str) -> Vec<Value> {
    let page = json_of(get(app, token, "/v1/me/feed").await, 200).await;
    page["items"].as_array().unwrap().clone()
}

fn kinds(items: &[Value]) -> Vec<&str> {
    items.iter().map(|i| i["kind"].as_str().unwrap()).collect()
}

/// The seat on turn moves (its first legal move) until the turn passes to
/// the other seat: `tokens` by seat.
async fn pass_the_turn(app: &TestApp, tokens: &[&str], id: &str) {
    let seat = view(app, tokens[0], id).await["current_seat"]
        .as_u64()
        .unwrap() as usize;
    loop {
        let v = view(app, tokens[seat], id).await;
        if v["current_seat"].as_u64() != Some(seat as u64) {
            return;
        }
        let (mv, version) = (&v["legal_moves"][0], v["version"].as_i64());
        json_of(play(app, tokens[seat], id, mv, version).await, 200).await;
    }
}

#[tokio::test]
async fn the_feed_tells_the_start_each_turn_and_the_end_with_the_badge() {
    let app = spawn_app().await;
    let [a, b, outsider]: [String; 3] = players(&app, 3).await.try_into().unwrap();
    let id = two_player_table(&app, &a, &b, None).await;
    let seat = view(&app, &a, &id).await["current_seat"].as_u64().unwrap() as usize;
    let (first, second) = if seat == 0 { (&a, &b) } else { (&b, &a) };

    let items = feed(&app, first).await;
    assert_eq!(kinds(&items), ["game_started", "your_turn"], "{items:?}");
    for item in &items {
        assert_eq!(item["table_id"], id.as_str());
        assert_eq!(item["my_turn"], 1, "the table waits for them: {item}");
        assert!(item["id"].as_i64().unwrap() > 0 && item["at"].is_string());
        assert!(item.get("deadline").is_none(), "no clock: {item}");
    }
    let theirs = feed(&app, second).await;
    assert_eq!(kinds(&theirs), ["game_started"]);
    assert_eq!(theirs[0]["my_turn"], 0);

    pass_the_turn(&app, &[&a, &b], &id).await;
    let theirs = feed(&app, second).await;
    assert_eq!(kinds(&theirs), ["game_started", "your_turn"]);
    assert_eq!(theirs[1]["my_turn"], 1);
    assert_eq!(
        kinds(&feed(&app, first).await).len(),
        2,
        "nothing new for the mover"
    );

    json_of(
        post_empty(&app, &a, &format!("/v1/tables/{id}/resign")).await,
        200,
    )
    .await;
    for token in [&a, &b] {
        let items = feed(&app, token).await;
        let last = items.last().unwrap();
        assert_eq!(last["kind"], "game_over", "{items:?}");
        assert_eq!(last["my_turn"], 0, "the game over, nothing waits");
    }
    assert!(feed(&app, &outsider).await.is_empty(), "not a player of it");

    // Oldest first, by pages: `next` is the last item's id.
    let all = feed(&app, &b).await;
    let page = json_of(get(&app, &b, "/v1/me/feed?limit=1").await, 200).await;
    assert_eq!(page["items"], json!([all[0]]));
    assert_eq!(page["next"], all[0]["id"]);
    let rest = get(&app, &b, &format!("/v1/me/feed?after={}", page["next"])).await;
    assert_eq!(json_of(rest, 200).await["items"], json!(all[1..]));
    let end = format!("/v1/me/feed?after={}", all.last().unwrap()["id"]);
    let end = json_of(get(&app, &b, &end).await, 200).await;
    assert_eq!(end, json!({"items": [], "next": all.last().unwrap()["id"]}));

    for bad in ["after=-1", "wait=31", "limit=0", "limit=101", "after=x"] {
        let res = get(&app, &b, &format!("/v1/me/feed?{bad}")).await;
        assert_problem(res, 400, "invalid_query").await;
    }
    let res = app.client.get(app.url("/v1/me/feed")).send().await.unwrap();
    assert_problem(res, 401, "unauthorized").await;
}

#[tokio::test]
async fn a_feed_long_poll_answers_within_a_second_of_the_move_through_another_process() {
    let one = spawn_app().await;
    let two = spawn_second_process(&one).await;
    let [a, b]: [String; 2] = players(&one, 2).await.try_into().unwrap();
    let id = two_player_table(&one, &a, &b, None).await;
    let seat = view(&one, &a, &id).await["current_seat"].as_u64().unwrap() as usize;
    let waiting = if seat == 0 { b.clone() } else { a.clone() };
    let after = feed(&two, &waiting).await.last().unwrap()["id"].clone();

    let poll = two
        .client
        .get(two.url(&format!("/v1/me/feed?after={after}&wait=25")))
        .bearer_auth(&waiting)
        .send();
    let mut poll = tokio::spawn(poll);
    assert!(
        tokio::time::timeout(Duration::from_millis(300), &mut poll)
            .await
            .is_err(),
        "the long poll answered with nothing new"
    );
    pass_the_turn(&one, &[&a, &b], &id).await;
    let res = tokio::time::timeout(Duration::from_secs(1), poll)
        .await
        .expect("the long poll of the other process answers within a second")
        .unwrap()
        .unwrap();
    let page = json_of(res, 200).await;
    assert_eq!(kinds(page["items"].as_array().unwrap()), ["your_turn"]);
    assert_eq!(page["items"][0]["table_id"], id.as_str());
}

#[tokio::test]
async fn the_feed_streams_through_another_process_and_resumes_after_its_last_item() {
    let one = spawn_app().await;
    let two = spawn_second_process(&one).await;
    let [a, b]: [String; 2] = players(&one, 2).await.try_into().unwrap();
    let stream = |after: Option<&Value>| {
        let mut req = two
            .client
            .get(two.url("/v1/me/feed/stream"))
            .bearer_auth(&b);
        if let Some(after) = after {
            req = req.header("last-event-id", after.to_string());
        }
        req.send()
    };
    let mut res = stream(None).await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(e2e::content_type(&res), "text/event-stream");
    let id = two_player_table(&one, &a, &b, None).await;
    let mut text = String::new();
    read_until(&mut res, &mut text, |t| !frames(t).is_empty()).await;
    assert_eq!(frames(&text)[0]["kind"], "game_started");
    assert!(text.contains(&format!("id: {}\n", frames(&text)[0]["id"])));
    drop(res);

    // Whoever's turn it is, b's feed gets a `your_turn` within two passes.
    pass_the_turn(&one, &[&a, &b], &id).await;
    pass_the_turn(&one, &[&a, &b], &id).await;
    let all = feed(&one, &b).await;
    let first = &all[0]["id"];
    let mut res = stream(Some(first)).await.unwrap();
    let mut text = String::new();
    read_until(&mut res, &mut text, |t| frames(t).len() >= all.len() - 1).await;
    assert_eq!(
        frames(&text),
        all[1..],
        "resumed after Last-Event-ID, no gap"
    );

    let bad = two
        .client
        .get(two.url("/v1/me/feed/stream"))
        .bearer_auth(&b)
        .header("last-event-id", "x")
        .send()
        .await
        .unwrap();
    assert_problem(bad, 400, "invalid_last_event_id").await;
}

#[tokio::test]
async fn a_turns_alarm_rings_once_at_80_percent_of_its_clock_whichever_process_rings_it() {
    let one = spawn_app().await;
    let _two = spawn_second_process(&one).await;
    let [a, b]: [String; 2] = players(&one, 2).await.try_into().unwrap();
    let id = two_player_table(&one, &a, &b, Some(json!({"turn_seconds": 5}))).await;
    let seat = view(&one, &a, &id).await["current_seat"].as_u64().unwrap() as usize;
    let on_turn = if seat == 0 { &a } else { &b };

    let told = eventually(Duration::from_secs(10), || async {
        let items = feed(&one, on_turn).await;
        items
            .iter()
            .any(|i| i["kind"] == "turn_ending")
            .then_some(items)
    })
    .await
    .expect("the alarm rings");
    let your_turn = told.iter().find(|i| i["kind"] == "your_turn").unwrap();
    let ending = told.iter().find(|i| i["kind"] == "turn_ending").unwrap();
    assert_eq!(ending["deadline"], your_turn["deadline"], "{told:?}");
    assert_eq!(ending["my_turn"], 1);
    let at = |i: &Value| chrono::DateTime::parse_from_rfc3339(i["at"].as_str().unwrap()).unwrap();
    let after = (at(ending) - at(your_turn)).num_milliseconds();
    assert!(
        (4_000..5_000).contains(&after),
        "80 % of a 5 s turn: rang {after} ms after it began"
    );
    // The turn times out (its move is the server's); the alarm never rang
    // twice, though two processes look for it.
    let other = if seat == 0 { &b } else { &a };
    eventually(Duration::from_secs(10), || async {
        kinds(&feed(&one, other).await)
            .contains(&"your_turn")
            .then_some(())
    })
    .await
    .expect("the turn passes after the timeout");
    let endings = feed(&one, on_turn).await;
    let endings: Vec<&Value> = endings
        .iter()
        .filter(|i| i["kind"] == "turn_ending" && i["deadline"] == your_turn["deadline"])
        .collect();
    assert_eq!(endings.len(), 1, "rung once: {endings:?}");
}

#[tokio::test]
async fn a_feed_long_poll_counts_among_the_callers_streams() {
    let app = spawn_app_with(|s| s.max_streams_per_account = 1).await;
    let [a]: [String; 1] = players(&app, 1).await.try_into().unwrap();
    // The feed's stream holds the caller's one place once it answers.
    let mut stream = app
        .client
        .get(app.url("/v1/me/feed/stream"))
        .bearer_auth(&a)
        .send()
        .await
        .unwrap();
    let mut text = String::new();
    read_until(&mut stream, &mut text, |t| t.contains("your feed")).await;
    let refused = get(&app, &a, "/v1/me/feed?wait=1").await;
    assert_problem(refused, 429, "too_many_streams").await;
    let at_once = get(&app, &a, "/v1/me/feed").await;
    assert_eq!(at_once.status(), 200, "a read without wait is no stream");
    drop(stream);
    eventually(Duration::from_secs(10), || async {
        let res = get(&app, &a, "/v1/me/feed?wait=1").await;
        (res.status() == 200).then_some(())
    })
    .await
    .expect("the place is given back when the stream closes");
}

#[tokio::test]
async fn items_past_the_retention_are_pruned() {
    let app = spawn_app_with(|s| s.feed_retention_secs = 1).await;
    let [a, b]: [String; 2] = players(&app, 2).await.try_into().unwrap();
    two_player_table(&app, &a, &b, None).await;
    assert!(!feed(&app, &a).await.is_empty());
    eventually(Duration::from_secs(10), || async {
        feed(&app, &a).await.is_empty().then_some(())
    })
    .await
    .expect("pruned after a second");
}
