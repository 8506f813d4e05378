//! Does a move cost more on a long table? Move latency over HTTP on a fresh
//! table (a handful of events) and on one with a long history (20,000
//! events written through the product's append), same players, same rules.

use std::time::{Duration, Instant};

use domain::{Status, Table, TableCommand};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use store::chain::GENESIS_PREV_HASH;
use store::NewEvent;

use crate::Error;

pub(crate) struct Player {
    pub(crate) id: String,
    pub(crate) token: String,
}

/// A JSON answer, or an error naming `what` failed and why.
pub(crate) async fn body(res: reqwest::Response, what: &str) -> Result<Value, Error> {
    let status = res.status();
    let v: Value = res.json().await.unwrap_or(Value::Null);
    if !status.is_success() {
        return Err(format!("{what}: {status} {v}").into());
    }
    Ok(v)
}

/// A new account, logged in (`tag` ends its name).
pub(crate) async fn player(
    client: &reqwest::Client,
    base: &str,
    tag: &str,
) -> Result<Player, Error> {
    let name = format!("hc{:08x}_{tag}", rand::thread_rng().gen::<u32>());
    let creds = json!({"username": name, "password": "bench-password-1"});
    let account = body(
        client
            .post(format!("{base}/v1/accounts"))
            .json(&creds)
            .send()
            .await?,
        "register",
    )
    .await?;
    Ok(Player {
        id: account["id"].as_str().ok_or("an account id")?.to_owned(),
        token: log_in(client, base, &name).await?,
    })
}

/// A session of `name` (with the bench's password): its token.
pub(crate) async fn log_in(
    client: &reqwest::Client,
    base: &str,
    name: &str,
) -> Result<String, Error> {
    let creds = json!({"username": name, "password": "bench-password-1"});
    let session = body(
        client
            .post(format!("{base}/v1/sessions"))
            .json(&creds)
            .send()
            .await?,
        "log in",
    )
    .await?;
    Ok(session["token"].as_str().ok_or("a token")?.to_owned())
}

/// Opens `table` as `creator`, seats `joiner` and starts it: its id.
pub(crate) async fn started_table(
    client: &reqwest::Client,
    base: &str,
    table: &Value,
    creator: &str,
    joiner: &str,
) -> Result<String, Error> {
    let summary = body(
        client
            .post(format!("{base}/v1/tables"))
            .bearer_auth(creator)
            .json(table)
            .send()
            .await?,
        "open",
    )
    .await?;
    let id = summary["id"].as_str().ok_or("a table id")?.to_owned();
    for (token, path, what) in [(joiner, "players", "join"), (creator, "start", "start")] {
        let url = format!("{base}/v1/tables/{id}/{path}");
        body(client.post(url).bearer_auth(token).send().await?, what).await?;
    }
    Ok(id)
}

fn options() -> Value {
    json!({"rounds": 1000, "target": 100000})
}

/// Plays `n` moves on a table (random legal moves of whoever is on turn) and
/// returns each move's latency in ms.
async fn moves(
    client: &reqwest::Client,
    base: &str,
    table: &str,
    players: &[Player; 2],
    n: usize,
    rng: &mut StdRng,
) -> Result<Vec<f64>, Error> {
    let mut latencies = Vec::with_capacity(n);
    let mut who = 0;
    while latencies.len() < n {
        if let Some(ms) = next_move(client, base, table, players, &mut who, rng).await? {
            latencies.push(ms);
        }
    }
    Ok(latencies)
}

/// One step of a game between `players`: `who` reads their view and, on
/// turn, posts a random legal move (not a challenge): its latency in ms;
/// else the other player is `who` now, and nothing was posted.
pub(crate) async fn next_move(
    client: &reqwest::Client,
    base: &str,
    table: &str,
    players: &[Player; 2],
    who: &mut usize,
    rng: &mut StdRng,
) -> Result<Option<f64>, Error> {
    let view = body(
        client
            .get(format!("{base}/v1/tables/{table}/view"))
            .bearer_auth(&players[*who].token)
            .send()
            .await?,
        "view",
    )
    .await?;
    if view["current_seat"] != view["my_seat"] {
        *who = 1 - *who;
        return Ok(None);
    }
    let legal: Vec<&Value> = view["legal_moves"]
        .as_array()
        .ok_or("legal moves")?
        .iter()
        .filter(|m| m["type"] != "challenge")
        .collect();
    let mv = legal[rng.gen_range(0..legal.len())];
    Ok(Some(
        timed_move(client, base, table, &players[*who], &view, mv).await?,
    ))
}

/// Posts `mv` at `view`'s version as `player`: its latency in ms.
pub(crate) async fn timed_move(
    client: &reqwest::Client,
    base: &str,
    table: &str,
    player: &Player,
    view: &Value,
    mv: &Value,
) -> Result<f64, Error> {
    let t0 = Instant::now();
    let res = client
        .post(format!("{base}/v1/tables/{table}/moves"))
        .bearer_auth(&player.token)
        .json(&json!({"move": mv, "expected_version": view["version"]}))
        .send()
        .await?;
    let ms = t0.elapsed().as_secs_f64() * 1000.0;
    body(res, "move").await?;
    Ok(ms)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

pub async fn run(base: &str, database_url: &str, n: usize, long: usize) -> Result<(), Error> {
    let base = base.trim_end_matches('/');
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()?;
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .connect(database_url)
        .await?;
    let mut rng = StdRng::seed_from_u64(5);
    let players = [
        player(&client, base, "a").await?,
        player(&client, base, "b").await?,
    ];

    // A fresh table, over HTTP.
    let table = json!({"ruleset": "classique", "options": options(), "seats": 2});
    let short_id =
        started_table(&client, base, &table, &players[0].token, &players[1].token).await?;

    // A long table, written through the product's append.
    let long_id = uuid::Uuid::new_v4();
    let creator: uuid::Uuid = players[0].id.parse()?;
    store::tables::insert_with_seats(&pool, long_id, "classique", 2, creator).await?;
    let mut log = Table::create(
        "classique",
        options().as_object().ok_or("object")?,
        2,
        None,
        &players[0].id.as_str().into(),
    )?;
    let mut t = Table::from_events(&log).ok_or("a table")?;
    log.extend(t.execute(
        &TableCommand::Join {
            account_id: players[1].id.as_str().into(),
            joining: domain::Joining::Open,
            guest: false,
            client_seed: None,
        },
        &mut rng,
    )?);
    log.extend(t.execute(
        &TableCommand::Start {
            account_id: players[0].id.as_str().into(),
        },
        &mut rng,
    )?);
    let mut written = 0i64;
    let mut head = GENESIS_PREV_HASH.to_owned();
    while (written as usize) < long && t.status() == Status::Playing {
        while log.len() < 2000 && t.status() == Status::Playing {
            let game = t.game.as_ref().ok_or("started")?;
            let seat = game
                .round()
                .and_then(|r| r.current)
                .ok_or("a seat on turn")?;
            let legal = game.legal_moves(seat);
            let mv = legal[rng.gen_range(0..legal.len())].clone();
            let account_id = t.players[seat].as_ref().ok_or("seated")?.account_id.clone();
            log.extend(t.execute(&TableCommand::Move { account_id, mv }, &mut rng)?);
        }
        let batch: Vec<NewEvent> = log.drain(..).map(|e| NewEvent::sealed(&e)).collect();
        let mut tx = pool.begin().await?;
        written = crate::replay::append_after(&mut tx, long_id, written, &mut head, batch).await?;
        store::tables::update_projection(&mut *tx, long_id, written, "playing", None).await?;
        tx.commit().await?;
    }
    let long_id = long_id.to_string();

    // Warm both (the first use of the long table folds its log), then measure.
    moves(&client, base, &short_id, &players, 5, &mut rng).await?;
    moves(&client, base, &long_id, &players, 5, &mut rng).await?;
    let mut short = Vec::new();
    let mut long_l = Vec::new();
    for _ in 0..4 {
        short.extend(moves(&client, base, &short_id, &players, n / 4, &mut rng).await?);
        long_l.extend(moves(&client, base, &long_id, &players, n / 4, &mut rng).await?);
    }
    let (s, l) = (median(short), median(long_l));
    println!(
        "history_cost: short_table_p50_ms={s:.2} long_table_events={written} long_table_p50_ms={l:.2} ratio={:.2}",
        l / s
    );
    Ok(())
}
