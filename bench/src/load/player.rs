//! One player of the load: its moves, and how it follows its table (long
//! polls of the view or of the events, or their streams).

use std::time::{Duration, Instant};

use hyper::header::HeaderValue;
use hyper::Uri;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::conn::{bearer, Conn};

use super::measure::Tally;
use super::Follow;

/// One player: on turn, a random legal move (never a challenge); otherwise
/// it waits for the table's events (long polls, or its event stream) and
/// fetches a fresh view when they concern it.
#[allow(clippy::too_many_arguments)] // one player: its clients, table, token and run
pub(super) async fn play(
    client: &reqwest::Client,
    mut conn: Conn,
    base: &str,
    table: &str,
    token: &str,
    deadline: Instant,
    seed: u64,
    follow: Follow,
) -> Tally {
    let base = base.trim_end_matches('/');
    let mut rng = StdRng::seed_from_u64(seed);
    let mut t = Tally::default();
    // The table's paths, parsed once like a client that keeps them: the
    // requests of the loop go through `conn` (origin form), the streams
    // through reqwest (the same path after the base URL).
    let path = |p: &str| -> Uri {
        format!("/v1/tables/{table}/{p}")
            .parse()
            .expect("a table id is a path segment")
    };
    let url = |p: &str| -> reqwest::Url {
        format!("{base}{}", path(p))
            .parse()
            .expect("the base URL is a URL")
    };
    let Ok(auth) = bearer(token) else {
        *t.refused.entry(0).or_default() += 1;
        return t;
    };
    let view_path = path("view");
    let moves_path = path("moves");
    let long_polls: Vec<Uri> = (1..=5).map(|w| path(&format!("view?wait={w}"))).collect();
    let mut view = match get_view(&mut conn, &view_path, &auth, &mut t).await {
        Some(v) => v,
        None => return t,
    };
    let mut after = view.version;
    let mut stream = match follow {
        Follow::Poll | Follow::View => None,
        Follow::Stream | Follow::ViewStream => {
            let url = match follow {
                Follow::Stream => url("events/stream"),
                _ => url("view/stream"),
            };
            let res = client
                .get(url)
                .bearer_auth(token)
                .header("Last-Event-ID", after.to_string())
                .timeout(
                    deadline.saturating_duration_since(Instant::now()) + Duration::from_secs(5),
                )
                .send()
                .await;
            match res {
                Ok(res) => {
                    t.note(res.status());
                    Some(EventStream::new(res))
                }
                Err(_) => {
                    *t.refused.entry(0).or_default() += 1;
                    return t;
                }
            }
        }
    };
    while Instant::now() < deadline {
        if view.status == "finished" {
            t.finished_games += u64::from(view.my_seat == Some(0));
            break;
        }
        let on_turn = view.current_seat.is_some() && view.current_seat == view.my_seat;
        let plays: Vec<&RawValue> = view
            .legal_moves
            .iter()
            .map(|m| &**m)
            .filter(|m| !m.get().contains(r#""type":"challenge""#))
            .collect();
        if on_turn && !plays.is_empty() {
            let post = Post {
                mv: plays[rng.gen_range(0..plays.len())],
                expected_version: view.version,
            };
            let t0 = Instant::now();
            let body = serde_json::to_vec(&post).expect("a move serializes");
            let Ok((status, body)) = conn.post_json(&moves_path, Some(&auth), body).await else {
                *t.refused.entry(0).or_default() += 1;
                continue;
            };
            t.note(status);
            if status.is_success() {
                t.latencies_ms.push(t0.elapsed().as_secs_f64() * 1000.0);
                if let Ok(body) = serde_json::from_slice::<Moved>(&body) {
                    view = body.view;
                    after = view.version;
                    continue;
                }
            }
        } else if follow == Follow::View {
            // A long poll of the view: the next one as soon as the table
            // moves (a 304 when it did not within `wait`), at most until
            // the end of the run.
            let left = deadline.saturating_duration_since(Instant::now());
            let wait = left.as_secs_f64().ceil().clamp(1.0, 5.0) as u64;
            let etag = HeaderValue::from_str(&format!("\"{}\"", view.version))
                .expect("a version is a header value");
            let polled = tokio::time::timeout_at(
                deadline.into(),
                conn.get(&long_polls[wait as usize - 1], Some(&auth), Some(etag)),
            )
            .await;
            let Ok(polled) = polled else { break };
            let Ok((status, body)) = polled else {
                *t.refused.entry(0).or_default() += 1;
                break;
            };
            t.note(status);
            if status == reqwest::StatusCode::NOT_MODIFIED {
                continue;
            }
            match serde_json::from_slice::<View>(&body) {
                Ok(v) => view = v,
                Err(_) => break,
            }
            continue;
        } else if follow == Follow::ViewStream {
            // The view stream: the next view as the table moves.
            let Some(stream) = stream.as_mut() else { break };
            match stream.next_view(view.version, deadline).await {
                Ok(next) => view = next,
                Err(Wait::Deadline) => break,
                Err(_) => {
                    *t.refused.entry(0).or_default() += 1;
                    break;
                }
            }
            continue;
        } else if let Some(stream) = stream.as_mut() {
            // The stream: read events until one after the view concerns
            // this player (or the run ends, or the stream fails).
            match stream.wait_for(view.version, view.my_seat, deadline).await {
                Wait::Concerned => {}
                Wait::Deadline => break,
                Wait::Failed => {
                    *t.refused.entry(0).or_default() += 1;
                    break;
                }
            }
        } else {
            // A long poll, at most until the end of the run (so that the
            // run ends on time and the rate is over the time played). Like
            // an app, a waiting player follows the game from the events and
            // fetches its view only when they concern it: its turn, a new
            // round, the end; or when the poll failed.
            // The poll is given up at the deadline (the server's `wait` is
            // in whole seconds).
            let left = deadline.saturating_duration_since(Instant::now());
            let wait = left.as_secs_f64().ceil().clamp(1.0, 5.0) as u64;
            let url = format!("{base}/v1/tables/{table}/events?after={after}&wait={wait}");
            let mut concerned = true;
            let polled =
                tokio::time::timeout_at(deadline.into(), client.get(url).bearer_auth(token).send())
                    .await;
            let Ok(polled) = polled else { break };
            if let Ok(res) = polled {
                t.note(res.status());
                if res.status().is_success() {
                    if let Ok(page) = res.json::<Page>().await {
                        after = page.next;
                        concerned = page.events.iter().any(|e| e.concerns(view.my_seat));
                    }
                }
            }
            if !concerned {
                continue;
            }
        }
        match get_view(&mut conn, &view_path, &auth, &mut t).await {
            Some(v) => view = v,
            None => break,
        }
        after = view.version;
    }
    t
}

/// A player's server-sent event stream, read frame by frame.
struct EventStream {
    res: reqwest::Response,
    buf: Vec<u8>,
}

enum Wait {
    Concerned,
    Deadline,
    Failed,
}

impl EventStream {
    fn new(res: reqwest::Response) -> Self {
        Self {
            res,
            buf: Vec::new(),
        }
    }

    /// The `data` of the next frame that has one (comments, such as
    /// keep-alives, are skipped).
    async fn next_data(&mut self, deadline: Instant) -> Result<Vec<u8>, Wait> {
        loop {
            while let Some(end) = self.buf.windows(2).position(|w| w == b"\n\n") {
                let frame: Vec<u8> = self.buf.drain(..end + 2).collect();
                if let Some(data) = frame
                    .split(|b| *b == b'\n')
                    .find_map(|line| line.strip_prefix(b"data: "))
                {
                    return Ok(data.to_vec());
                }
            }
            match tokio::time::timeout_at(deadline.into(), self.res.chunk()).await {
                Err(_) => return Err(Wait::Deadline),
                Ok(Ok(Some(chunk))) => self.buf.extend_from_slice(&chunk),
                Ok(_) => return Err(Wait::Failed),
            }
        }
    }

    /// Reads until an event after seq `seen` concerns `my_seat`.
    async fn wait_for(&mut self, seen: i64, my_seat: Option<u64>, deadline: Instant) -> Wait {
        loop {
            match self.next_data(deadline).await {
                Err(wait) => return wait,
                Ok(data) => {
                    if serde_json::from_slice::<Head>(&data)
                        .is_ok_and(|e| e.seq > seen && e.concerns(my_seat))
                    {
                        return Wait::Concerned;
                    }
                }
            }
        }
    }

    /// Reads until a view of a version after `seen`.
    async fn next_view(&mut self, seen: i64, deadline: Instant) -> Result<View, Wait> {
        loop {
            let data = self.next_data(deadline).await?;
            if let Ok(view) = serde_json::from_slice::<View>(&data) {
                if view.version > seen {
                    return Ok(view);
                }
            }
        }
    }
}

// What a player reads of the answers: typed, the rest skipped, the legal
// moves kept as their JSON text to post one back as it is (the load
// generator shares the machine with the server: it should cost little).

/// A player's view.
#[derive(Deserialize)]
struct View {
    version: i64,
    status: String,
    my_seat: Option<u64>,
    current_seat: Option<u64>,
    #[serde(default)]
    legal_moves: Vec<Box<RawValue>>,
}

/// The answer to a move.
#[derive(Deserialize)]
struct Moved {
    view: View,
}

/// A long poll's page.
#[derive(Deserialize)]
struct Page {
    next: i64,
    events: Vec<Head>,
}

/// An event's seq, type and seat.
#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    seq: i64,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    data: HeadData,
}

#[derive(Deserialize, Default)]
struct HeadData {
    seat: Option<u64>,
}

impl Head {
    /// Whether the event makes a waiting player look at its view again: its
    /// turn starts, or a round or the game begins or ends.
    fn concerns(&self, my_seat: Option<u64>) -> bool {
        match self.kind.as_str() {
            "turn_started" => self.data.seat.is_some() && self.data.seat == my_seat,
            "round_started" | "round_ended" | "game_ended" => true,
            _ => false,
        }
    }
}

/// A move posted.
#[derive(Serialize)]
struct Post<'a> {
    #[serde(rename = "move")]
    mv: &'a RawValue,
    expected_version: i64,
}

async fn get_view(conn: &mut Conn, path: &Uri, auth: &HeaderValue, t: &mut Tally) -> Option<View> {
    let (status, body) = conn.get(path, Some(auth), None).await.ok()?;
    t.note(status);
    serde_json::from_slice::<View>(&body).ok()
}
