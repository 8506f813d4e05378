//! `loadgen my-tables`: one player at T running tables (`--tables`, 500 by
//! default), about half of them waiting for the player, and F finished
//! ones (`--finished`, their rows still in `table_players`): how long
//! `GET /v1/me/tables?turn=mine` and `GET /v1/me/tables` take for a page
//! (`--limit`), asked `--requests` times each, once every table is cached
//! by the server (the first request of each kind warms it). Prints one
//! line per kind:
//! `my-tables kind=<turn_mine|not_over> tables=<t> finished=<f> my_turn=<n> limit=<l> p50_ms=<a> p99_ms=<b>`

use std::time::Instant;

use serde_json::json;

use crate::history_cost::{body, player, started_table};
use crate::load::measure::percentile;
use crate::Error;

pub struct MyTablesArgs {
    pub base_url: String,
    pub tables: usize,
    pub finished: usize,
    pub limit: usize,
    pub requests: usize,
}

pub async fn run(args: MyTablesArgs) -> Result<(), Error> {
    let client = reqwest::Client::builder().no_proxy().build()?;
    let base = args.base_url.trim_end_matches('/');
    let me = player(&client, base, "me").await?.token;
    let other = player(&client, base, "other").await?.token;
    let table = json!({"ruleset": "classique", "seats": 2, "options": {"target": 100000}});
    let opened = Instant::now();
    for _ in 0..args.finished {
        let id = started_table(&client, base, &table, &me, &other).await?;
        let resign = client
            .post(format!("{base}/v1/tables/{id}/resign"))
            .bearer_auth(&other);
        body(resign.send().await?, "resign").await?;
    }
    for _ in 0..args.tables {
        started_table(&client, base, &table, &me, &other).await?;
    }
    eprintln!(
        "loadgen my-tables: {} running and {} finished tables opened in {:.1} s",
        args.tables,
        args.finished,
        opened.elapsed().as_secs_f64()
    );
    for (kind, query) in [("turn_mine", "turn=mine&"), ("not_over", "")] {
        let url = format!("{base}/v1/me/tables?{query}limit={}", args.limit);
        let mut ms = Vec::with_capacity(args.requests);
        let mut my_turn = json!(null);
        for i in 0..=args.requests {
            let sent = Instant::now();
            let page = body(client.get(&url).bearer_auth(&me).send().await?, kind).await?;
            // The first warms the cache; it is not counted.
            if i > 0 {
                ms.push(sent.elapsed().as_secs_f64() * 1000.0);
            }
            my_turn = page["my_turn"].clone();
        }
        ms.sort_by(f64::total_cmp);
        println!(
            "my-tables kind={kind} tables={} finished={} my_turn={my_turn} limit={} p50_ms={:.2} p99_ms={:.2}",
            args.tables,
            args.finished,
            args.limit,
            percentile(&ms, 0.50),
            percentile(&ms, 0.99),
        );
    }
    Ok(())
}
