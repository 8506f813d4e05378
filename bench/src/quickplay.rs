//! `loadgen quickplay`: players arriving through quick play (docs/API.md
//! "Finding a game"). Each wave, A new players call `POST /v1/quickplay`
//! at once, with settings of the wave's own (its own `target`), spread
//! over the given servers; every answer's latency is measured, then the
//! tables the wave opened are counted against the fewest possible
//! (`ceil(A / seats)`), and every player's seat against one. Prints one
//! line:
//! `quickplay arrivals=<a> seats=<s> waves=<w> p50_ms=<x> p99_ms=<y> max_ms=<z> tables=<t> minimum=<m> seated_twice=<d> unseated=<u> errors=<e>`

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use serde_json::json;

use crate::history_cost::player;
use crate::load::measure::percentile;
use crate::Error;

pub struct QuickPlayArgs {
    /// The servers, the arrivals spread over them in turn.
    pub base_urls: Vec<String>,
    pub arrivals: usize,
    pub seats: usize,
    pub waves: usize,
}

/// What one wave of arrivals came to.
#[derive(Default)]
struct Wave {
    latencies: Vec<f64>,
    tables: usize,
    errors: usize,
    /// Players seated at more than one table, and at none.
    twice: usize,
    unseated: usize,
}

pub async fn run(args: QuickPlayArgs) -> Result<(), Error> {
    let client = reqwest::Client::builder().no_proxy().build()?;
    let bases: Vec<&str> = args
        .base_urls
        .iter()
        .map(|b| b.trim_end_matches('/'))
        .collect();
    let mut all = Wave::default();
    for n in 0..args.waves {
        let w = wave(&client, &bases, &args, n).await?;
        all.latencies.extend(w.latencies);
        all.tables += w.tables;
        all.errors += w.errors;
        all.twice += w.twice;
        all.unseated += w.unseated;
    }
    let Wave {
        mut latencies,
        tables,
        errors,
        twice,
        unseated,
    } = all;
    latencies.sort_by(f64::total_cmp);
    let minimum = args.waves * args.arrivals.div_ceil(args.seats);
    println!(
        "quickplay arrivals={} seats={} waves={} p50_ms={:.1} p99_ms={:.1} max_ms={:.1} tables={tables} minimum={minimum} seated_twice={twice} unseated={unseated} errors={errors}",
        args.arrivals,
        args.seats,
        args.waves,
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        latencies.last().copied().unwrap_or_default(),
    );
    Ok(())
}

/// Wave `n`: new players, then all of them at once through quick play,
/// with a setting of the wave's own (no table of an earlier wave fits).
async fn wave(
    client: &reqwest::Client,
    bases: &[&str],
    args: &QuickPlayArgs,
    n: usize,
) -> Result<Wave, Error> {
    let mut tokens = Vec::with_capacity(args.arrivals);
    for i in 0..args.arrivals {
        let base = bases[i % bases.len()];
        tokens.push((base, player(client, base, &format!("q{i}")).await?.token));
    }
    let body = json!({
        "ruleset": "classique", "seats": args.seats,
        "options": {"target": 1000 + n}
    });
    let calls = tokens.iter().map(|(base, token)| {
        let body = &body;
        async move {
            let sent = Instant::now();
            let res = client
                .post(format!("{base}/v1/quickplay"))
                .bearer_auth(token)
                .json(body)
                .send()
                .await;
            let ms = sent.elapsed().as_secs_f64() * 1000.0;
            let answer = match res {
                Ok(res) if res.status().is_success() => res.json::<serde_json::Value>().await.ok(),
                _ => None,
            };
            (ms, answer)
        }
    });
    let mut w = Wave::default();
    let mut opened = HashSet::new();
    for (ms, answer) in futures_util::future::join_all(calls).await {
        w.latencies.push(ms);
        match answer {
            Some(table) => opened.insert(table["id"].as_str().unwrap_or_default().to_owned()),
            None => {
                w.errors += 1;
                continue;
            }
        };
    }
    // Every player's seats, from the tables the wave opened.
    let mut seated: HashMap<String, usize> = HashMap::new();
    let (base, token) = &tokens[0];
    for id in &opened {
        let url = format!("{base}/v1/tables/{id}");
        let table: serde_json::Value = client
            .get(url)
            .bearer_auth(token)
            .send()
            .await?
            .json()
            .await?;
        for p in table["players"].as_array().into_iter().flatten() {
            *seated.entry(p["account_id"].to_string()).or_default() += 1;
        }
    }
    w.twice = seated.values().filter(|n| **n > 1).count();
    w.unseated = args.arrivals - seated.len();
    w.tables = opened.len();
    Ok(w)
}
