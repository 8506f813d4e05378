//! Statistics, ratings and leaderboards (docs/API.md "Finding a game and
//! coming back"): who is rated by which games, the profile and the board
//! over HTTP without a token, their limits, and `huit ratings rebuild`
//! reproducing the stored values bit for bit, whatever order games commit
//! in (a property test over random games with ties, resignations, bots and
//! aborts).

use std::process::Command;

use crate::feed::two_player_table;
use crate::support::process::huit_bin;
use crate::support::{
    each_moves, get, json_of, play, players, post, post_empty, started_table, username, view,
};
use domain::{Finish, PlayerId, RatedGame, Rating};
use e2e::{assert_problem, spawn_app, spawn_app_with, TestApp};
use serde_json::{json, Value};
use uuid::Uuid;

/// Plays the started table `id` to its end (each seat on turn plays its
/// first legal move; `tokens` by seat); its result.
pub(crate) async fn play_out(app: &TestApp, tokens: &[String], id: &str) -> Value {
    loop {
        let v = view(app, &tokens[0], id).await;
        if v["status"] == "finished" {
            return v["result"].clone();
        }
        let seat = v["current_seat"].as_u64().expect("a seat on turn") as usize;
        let mine = view(app, &tokens[seat], id).await;
        let (mv, version) = (&mine["legal_moves"][0], mine["version"].as_i64());
        json_of(play(app, &tokens[seat], id, mv, version).await, 200).await;
    }
}

/// A player's profile, read without a token.
pub(crate) async fn profile(app: &TestApp, username: &str) -> Value {
    let res = app
        .client
        .get(app.url(&format!("/v1/players/{username}")))
        .send()
        .await
        .expect("sent");
    json_of(res, 200).await
}

/// Nothing differs between the stored values and the logs' fold; how many
/// rated games the logs hold.
pub(crate) async fn rebuilt_the_same(app: &TestApp) -> usize {
    let rebuilt = api::ratings::rebuild(&app.pool, false, |_| {})
        .await
        .expect("the rebuild runs");
    assert_eq!(rebuilt.different, 0, "{:?}", rebuilt.differences);
    rebuilt.games
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[tokio::test]
async fn a_game_between_people_rates_each_by_place_and_shows_on_their_profiles() {
    let app = spawn_app().await;
    let (id, tokens) = started_table(&app, "classique", json!({"rounds": 1}), 3).await;
    let result = play_out(&app, &tokens, &id).await;
    let ranking = result["ranking"].as_array().unwrap();
    let placing = |seat: usize| ranking.iter().find(|p| p["seat"] == seat).unwrap();
    let finishes: Vec<Finish> = (0..3)
        .map(|seat| Finish {
            player: PlayerId::from(format!("{seat}")),
            place: placing(seat)["place"].as_u64().unwrap() as usize,
            total: placing(seat)["total"].as_i64().unwrap() as i32,
            won: result["winners"].as_array().unwrap().contains(&json!(seat)),
        })
        .collect();
    let game = RatedGame {
        ruleset: "classique".into(),
        finishes: finishes.clone(),
    };
    let expected = game.rate(&[Rating::NEW; 3]);
    for (seat, token) in tokens.iter().enumerate() {
        let name = username(&app, token).await;
        // Whatever the case of the name asked for.
        let p = profile(&app, &name.to_uppercase()).await;
        assert_eq!(p["username"], name);
        let stats = p["stats"].as_array().unwrap();
        assert_eq!(stats.len(), 1, "{p}");
        let s = &stats[0];
        let f = &finishes[seat];
        assert_eq!(s["ruleset"], "classique");
        assert_eq!(s["games"], 1);
        assert_eq!(s["wins"], u64::from(f.won));
        assert_eq!(s["average_place"].as_f64(), Some(f.place as f64));
        assert_eq!(s["points"], f.total);
        assert!(
            close(s["rating"].as_f64().unwrap(), expected[seat].mu),
            "{s}"
        );
        assert!(close(
            s["rating_deviation"].as_f64().unwrap(),
            expected[seat].sigma
        ));
        assert_eq!(s["provisional"], true);
        let recent = &p["recent"][0];
        assert_eq!(recent["table_id"], id.as_str());
        assert_eq!(recent["place"], f.place);
        assert_eq!(recent["won"], f.won);
        assert_eq!(recent["rating_before"], 25.0);
        assert!(close(
            recent["rating_after"].as_f64().unwrap(),
            expected[seat].mu
        ));
    }
    // The winner gained, the last lost.
    let best = finishes.iter().position(|f| f.place == 1).unwrap();
    assert!(expected[best].mu > 25.0);
    assert_eq!(rebuilt_the_same(&app).await, 1);
    // Unknown and impossible names.
    for name in ["nobody_here", "no%20such%20name", "ab"] {
        let res = app
            .client
            .get(app.url(&format!("/v1/players/{name}")))
            .send()
            .await
            .unwrap();
        assert_problem(res, 404, "not_found").await;
    }
}

#[tokio::test]
async fn games_with_a_bot_seat_or_aborted_count_for_nobody_and_a_resigned_game_counts_as_ranked() {
    let app = spawn_app().await;
    let tokens = players(&app, 2).await;
    let names = [
        username(&app, &tokens[0]).await,
        username(&app, &tokens[1]).await,
    ];

    // A person and a bot: the person resigns, the game is over, unrated.
    let body = json!({"ruleset": "moderne", "seats": 2, "bots": [{"level": "basic"}]});
    let table = json_of(post(&app, &tokens[0], "/v1/tables", &body).await, 201).await;
    let bot_table = table["id"].as_str().unwrap().to_owned();
    json_of(
        post_empty(&app, &tokens[0], &format!("/v1/tables/{bot_table}/start")).await,
        200,
    )
    .await;
    json_of(
        post_empty(&app, &tokens[0], &format!("/v1/tables/{bot_table}/resign")).await,
        200,
    )
    .await;
    assert_eq!(
        view(&app, &tokens[0], &bot_table).await["status"],
        "finished"
    );

    // Two persons, aborted at once: no game to rate.
    let aborted = two_player_table(&app, &tokens[0], &tokens[1], None).await;
    let res = post_empty(&app, &tokens[0], &format!("/v1/tables/{aborted}/abort")).await;
    json_of(res, 200).await;
    for name in &names {
        assert_eq!(profile(&app, name).await["stats"], json!([]));
    }

    // D43: two persons, one resigns before both moved: nobody played it.
    let at_once = two_player_table(&app, &tokens[0], &tokens[1], None).await;
    json_of(
        post_empty(&app, &tokens[1], &format!("/v1/tables/{at_once}/resign")).await,
        200,
    )
    .await;
    assert_eq!(view(&app, &tokens[0], &at_once).await["status"], "finished");
    for name in &names {
        assert_eq!(profile(&app, name).await["stats"], json!([]));
    }

    // Two persons who both moved, one resigns: rated as its ranking says.
    let resigned = two_player_table(&app, &tokens[0], &tokens[1], None).await;
    each_moves(&app, &tokens, &resigned).await;
    json_of(
        post_empty(&app, &tokens[1], &format!("/v1/tables/{resigned}/resign")).await,
        200,
    )
    .await;
    let (winner, loser) = (
        profile(&app, &names[0]).await,
        profile(&app, &names[1]).await,
    );
    assert_eq!(winner["stats"][0]["ruleset"], "classique");
    assert_eq!(winner["stats"][0]["wins"], 1);
    assert_eq!(winner["stats"][0]["average_place"], 1.0);
    assert_eq!(loser["stats"][0]["wins"], 0);
    assert_eq!(loser["stats"][0]["average_place"], 2.0);
    assert!(close(
        winner["stats"][0]["rating"].as_f64().unwrap(),
        27.635_231_383_473_65
    ));
    assert!(close(
        loser["stats"][0]["rating"].as_f64().unwrap(),
        22.364_768_616_526_35
    ));
    assert_eq!(winner["recent"].as_array().unwrap().len(), 1);
    assert_eq!(rebuilt_the_same(&app).await, 1);
}

/// Gives the account of `token` this standing in `ruleset`, as if earned.
async fn arrange_standing(app: &TestApp, token: &str, ruleset: &str, mu: f64, sigma: f64) {
    let me = json_of(get(app, token, "/v1/me").await, 200).await;
    let id: Uuid = me["id"].as_str().unwrap().parse().unwrap();
    sqlx::query(
        "INSERT INTO ratings (account_id, ruleset, mu, sigma, games, wins, places, points) \
         VALUES ($1, $2, $3, $4, 10, 4, 20, 300)",
    )
    .bind(id)
    .bind(ruleset)
    .bind(mu)
    .bind(sigma)
    .execute(&app.pool)
    .await
    .expect("a standing");
}

async fn board(app: &TestApp, query: &str) -> reqwest::Response {
    app.client
        .get(app.url(&format!("/v1/leaderboards/{query}")))
        .send()
        .await
        .expect("sent")
}

#[tokio::test]
async fn a_leaderboard_lists_established_ratings_best_first_by_pages_with_their_ranks() {
    let app = spawn_app().await;
    let tokens = players(&app, 6).await;
    // Two tied at 30, one provisional (kept off), one of another ruleset.
    let standings = [
        (31.0, 2.0),
        (30.0, 3.0),
        (30.0, 5.5),
        (29.0, 6.0),
        (40.0, 6.5),
    ];
    for (token, (mu, sigma)) in tokens.iter().zip(standings) {
        arrange_standing(&app, token, "amerix", mu, sigma).await;
    }
    arrange_standing(&app, &tokens[5], "757", 50.0, 1.0).await;
    let names: Vec<String> = {
        let mut names = Vec::new();
        for t in &tokens {
            names.push(username(&app, t).await);
        }
        names
    };

    let mut seen = Vec::new();
    let mut query = "amerix?limit=2".to_owned();
    loop {
        let page = json_of(board(&app, &query).await, 200).await;
        assert_eq!(page["ruleset"], "amerix");
        for p in page["players"].as_array().unwrap() {
            seen.push((
                p["rank"].as_i64().unwrap(),
                p["username"].as_str().unwrap().to_owned(),
                p["rating"].as_f64().unwrap(),
            ));
            assert!(p["rating_deviation"].as_f64().unwrap() <= 6.0);
            assert_eq!(p["games"], 10);
            assert_eq!(p["wins"], 4);
        }
        match page["next"].as_str() {
            Some(next) => query = format!("amerix?limit=2&after={next}"),
            None => break,
        }
    }
    let ranks: Vec<i64> = seen.iter().map(|s| s.0).collect();
    assert_eq!(ranks, [1, 2, 3, 4]);
    assert_eq!(seen[0].1, names[0]);
    assert_eq!(seen[3].1, names[3]);
    // The tie at 30: both, the account ids in order.
    let tied: Vec<&str> = seen[1..3].iter().map(|s| s.1.as_str()).collect();
    assert!(tied.contains(&names[1].as_str()) && tied.contains(&names[2].as_str()));
    assert!(
        !seen.iter().any(|s| s.1 == names[4]),
        "a provisional rating is off the board"
    );

    let other = json_of(board(&app, "757").await, 200).await;
    assert_eq!(other["players"][0]["username"], names[5].as_str());
    assert_eq!(other["next"], Value::Null);
    let empty = json_of(board(&app, "base").await, 200).await;
    assert_eq!(empty["players"], json!([]));

    assert_problem(board(&app, "poker").await, 404, "not_found").await;
    for bad in [
        "amerix?limit=0",
        "amerix?limit=101",
        "amerix?after=1.abc",
        "amerix?after=3.7ff8000000000000.00000000000000000000000000000000",
        "amerix?after=-1.403e000000000000.00000000000000000000000000000000",
    ] {
        assert_problem(board(&app, bad).await, 400, "invalid_query").await;
    }
}

#[tokio::test]
async fn public_reads_are_limited_per_address() {
    let app = spawn_app_with(|s| s.public_reads_per_minute = 3).await;
    let token = app.player_token("limited").await;
    for _ in 0..2 {
        profile(&app, "limited").await;
    }
    json_of(board(&app, "classique").await, 200).await;
    let res = board(&app, "classique").await;
    assert!(res.headers().contains_key("retry-after"));
    assert_problem(res, 429, "too_many_requests").await;
    // What needs a token is not counted against it.
    json_of(get(&app, &token, "/v1/me").await, 200).await;
}

/// `huit ratings rebuild` on the database of `app`: its exit code and what
/// it printed.
fn rebuild_command(app: &TestApp, check: bool) -> (i32, String) {
    let mut url = reqwest::Url::parse(&e2e::cluster_url()).unwrap();
    url.set_path(&app.database);
    let mut command = Command::new(huit_bin());
    command
        .args(["ratings", "rebuild"])
        .env("DATABASE_URL", url.as_str());
    if check {
        command.arg("--check");
    }
    let out = command.output().expect("huit runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code().unwrap_or(-1), text)
}

#[tokio::test]
async fn huit_ratings_rebuild_checks_finds_a_changed_value_and_writes_the_logs_values_back() {
    let app = spawn_app().await;
    for _ in 0..2 {
        let (id, tokens) = started_table(&app, "757", json!({"rounds": 1}), 2).await;
        play_out(&app, &tokens, &id).await;
    }
    let (code, out) = rebuild_command(&app, true);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("2 rated games from 2 finished tables"),
        "{out}"
    );
    assert!(out.contains("0 rows differ"), "{out}");
    assert!(out.contains("games/s"), "{out}");

    let stored: Vec<(Uuid, f64)> = sqlx::query_as("SELECT account_id, mu FROM ratings ORDER BY 1")
        .fetch_all(&app.pool)
        .await
        .unwrap();
    // One bit off, in one rating.
    sqlx::query("UPDATE ratings SET mu = $2 WHERE account_id = $1")
        .bind(stored[0].0)
        .bind(f64::from_bits(stored[0].1.to_bits() + 1))
        .execute(&app.pool)
        .await
        .unwrap();
    let (code, out) = rebuild_command(&app, true);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("1 rows differ"), "{out}");
    assert!(out.contains("differs: "), "{out}");

    let (code, out) = rebuild_command(&app, false);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("stored"), "{out}");
    let again: Vec<(Uuid, f64)> = sqlx::query_as("SELECT account_id, mu FROM ratings ORDER BY 1")
        .fetch_all(&app.pool)
        .await
        .unwrap();
    let bits = |v: &[(Uuid, f64)]| v.iter().map(|(a, m)| (*a, m.to_bits())).collect::<Vec<_>>();
    assert_eq!(bits(&again), bits(&stored));
    assert_eq!(rebuilt_the_same(&app).await, 2);
}

/// What a server before D43 stored for the finished table `id`: its game
/// rated whoever moved in it.
async fn rated_as_before_d43(app: &TestApp, id: &str) {
    let rows: Vec<(String, i32, String, chrono::DateTime<chrono::Utc>)> = sqlx::query_as(
        "SELECT type, v, data::text, at FROM events WHERE table_id = $1::uuid ORDER BY seq",
    )
    .bind(id)
    .fetch_all(&app.pool)
    .await
    .unwrap();
    let log: Vec<domain::TableEvent> = rows
        .iter()
        .map(|(kind, v, data, _)| domain::TableEvent::read(kind, *v as u32, data).unwrap())
        .collect();
    let table = domain::Table::from_events(&log).unwrap();
    let end = log.iter().rev().find_map(|e| match e {
        domain::TableEvent::Game(domain::Event::GameEnded(end)) => Some(end),
        _ => None,
    });
    let end = end.expect("the game is over");
    assert_eq!(table.rated_game(end), None, "D43 rates it not");
    let game = RatedGame::of(&table.ruleset, table.seated(), |_| true, end).unwrap();
    let ended = api::ratings::Ended {
        table_id: id.parse().unwrap(),
        at: rows.last().unwrap().3,
        game,
    };
    let mut tx = app.pool.begin().await.unwrap();
    let change = api::ratings::Rerate::Ended(ended);
    api::ratings::record(&mut tx, &change).await.unwrap();
    tx.commit().await.unwrap();
}

#[tokio::test]
async fn d43_ratings_stored_before_the_rule_are_brought_in_line_by_one_rebuild() {
    let app = spawn_app().await;
    let tokens = players(&app, 2).await;
    let name = username(&app, &tokens[0]).await;
    // A game resigned before anyone moved, rated as a server before D43
    // did; then a game both played, rated by this one.
    let early = two_player_table(&app, &tokens[0], &tokens[1], None).await;
    json_of(
        post_empty(&app, &tokens[1], &format!("/v1/tables/{early}/resign")).await,
        200,
    )
    .await;
    rated_as_before_d43(&app, &early).await;
    assert_eq!(profile(&app, &name).await["stats"][0]["games"], 1);
    let played = two_player_table(&app, &tokens[0], &tokens[1], None).await;
    each_moves(&app, &tokens, &played).await;
    json_of(
        post_empty(&app, &tokens[1], &format!("/v1/tables/{played}/resign")).await,
        200,
    )
    .await;
    // The check sees the stored values are not the logs' fold under D43.
    let (code, out) = rebuild_command(&app, true);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("1 rated games from 2 finished tables"),
        "{out}"
    );
    // One rebuild stores the fold: the early game counts for nobody, the
    // played one is rated as if it had been the first.
    let (code, out) = rebuild_command(&app, false);
    assert_eq!(code, 0, "{out}");
    let (code, out) = rebuild_command(&app, true);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 rows differ"), "{out}");
    let stats = &profile(&app, &name).await["stats"][0];
    assert_eq!(stats["games"], 1);
    assert!(close(
        stats["rating"].as_f64().unwrap(),
        27.635_231_383_473_65
    ));
}

mod property {
    //! Random games stored as their logs, rated in a random commit order
    //! through [`api::ratings::record`] (the server's own step), their
    //! results corrected at random (voided, given back, points changed, a
    //! seat disqualified) and re-rated the same way, and folded again from
    //! the logs by [`api::ratings::rebuild`].

    use api::ratings::{Ended, Rerate};
    use api::table_service::player_id;
    use domain::bots::Level;
    use domain::table::Correction;
    use domain::{Event, Joining, RatedGame, Table, TableCommand, TableEvent};
    use e2e::games::{play_game, store_table};
    use proptest::prelude::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;
    use serde_json::json;
    use sqlx::PgPool;
    use uuid::Uuid;

    /// How a game goes.
    #[derive(Debug, Clone, Copy)]
    enum Ending {
        /// Played to its end (one round).
        Played,
        /// Played to an end where some players tie.
        Tied,
        /// Every person moves, then they resign, one after the other,
        /// until it ends.
        Resigned,
        /// The persons resign, one after the other, before anyone moved
        /// (D43: not rated).
        ResignedAtOnce,
        /// Its last seat is a bot's.
        WithBot,
        /// Aborted before anyone moved.
        Aborted,
    }

    #[derive(Debug, Clone)]
    struct Spec {
        /// Indices into the accounts, in seat order.
        seats: Vec<usize>,
        ending: Ending,
        seed: u64,
    }

    fn spec() -> impl Strategy<Value = Spec> {
        let ending = prop_oneof![
            3 => Just(Ending::Played),
            2 => Just(Ending::Tied),
            2 => Just(Ending::Resigned),
            1 => Just(Ending::ResignedAtOnce),
            1 => Just(Ending::WithBot),
            1 => Just(Ending::Aborted),
        ];
        (
            Just((0..ACCOUNTS).collect::<Vec<_>>()).prop_shuffle(),
            2..=4usize,
            ending,
            any::<u64>(),
        )
            .prop_map(|(order, n, ending, seed)| Spec {
                seats: order[..n].to_vec(),
                ending,
                seed,
            })
    }

    const ACCOUNTS: usize = 5;
    /// One ruleset's order is what ratings fold; a second shows they keep apart.
    const RULESETS: [&str; 2] = ["classique", "757"];

    /// The log of the game `spec` describes, batch by batch.
    fn log_of(spec: &Spec, ruleset: &str, accounts: &[(Uuid, String)]) -> Vec<Vec<TableEvent>> {
        let mut seated: Vec<(Uuid, String)> =
            spec.seats.iter().map(|&i| accounts[i].clone()).collect();
        if let (Ending::Tied, 2) = (spec.ending, seated.len()) {
            // Two players hardly ever tie: a third makes it likely enough.
            let third = (0..ACCOUNTS)
                .find(|i| !spec.seats.contains(i))
                .expect("a third");
            seated.push(accounts[third].clone());
        }
        match spec.ending {
            Ending::Played => play_game(ruleset, json!({"rounds": 1}), &seated, spec.seed).batches,
            Ending::Tied => (0..5000)
                .map(|k| {
                    play_game(
                        ruleset,
                        json!({"rounds": 1}),
                        &seated,
                        spec.seed.wrapping_add(k),
                    )
                    .batches
                })
                .find(|batches| tied(batches))
                .expect("a seed with a tie"),
            Ending::Resigned | Ending::ResignedAtOnce | Ending::WithBot | Ending::Aborted => {
                stopped(spec, ruleset, &seated)
            }
        }
    }

    /// Whether a game ended with players sharing a place.
    fn tied(batches: &[Vec<TableEvent>]) -> bool {
        batches.iter().flatten().any(|e| match e {
            TableEvent::Game(Event::GameEnded(end)) => {
                let mut places: Vec<usize> = end.ranking.iter().map(|p| p.place).collect();
                places.dedup();
                places.len() < end.ranking.len()
            }
            _ => false,
        })
    }

    /// A game that stops by resignations or an abort, with a bot at its
    /// last seat for [`Ending::WithBot`].
    fn stopped(spec: &Spec, ruleset: &str, seated: &[(Uuid, String)]) -> Vec<Vec<TableEvent>> {
        let mut rng = StdRng::seed_from_u64(spec.seed);
        let (creator, _) = &seated[0];
        let options = Default::default();
        let created = Table::create(ruleset, &options, seated.len(), None, &player_id(*creator))
            .expect("created");
        let mut table = Table::from_events(&created).expect("a table");
        let mut batches = vec![created];
        let persons = match spec.ending {
            Ending::WithBot => &seated[..seated.len() - 1],
            _ => seated,
        };
        let mut run = |table: &mut Table, command: TableCommand| {
            batches.push(table.execute(&command, &mut rng).expect("accepted"));
        };
        for (id, _) in &persons[1..] {
            let join = TableCommand::Join {
                account_id: player_id(*id),
                joining: Joining::Open,
                guest: false,
                client_seed: None,
            };
            run(&mut table, join);
        }
        let by_creator = player_id(*creator);
        if persons.len() < seated.len() {
            let bot = TableCommand::SeatBot {
                account_id: by_creator.clone(),
                level: Level::Basic,
                client_seed: None,
            };
            run(&mut table, bot);
        }
        run(
            &mut table,
            TableCommand::Start {
                account_id: by_creator.clone(),
            },
        );
        if let Ending::Aborted = spec.ending {
            run(
                &mut table,
                TableCommand::Abort {
                    account_id: by_creator,
                },
            );
            return batches;
        }
        if let Ending::Resigned = spec.ending {
            // Each seat on turn plays its first legal move until every
            // person has moved.
            let mut moved = vec![false; seated.len()];
            while table.status() == domain::Status::Playing && moved.contains(&false) {
                let seat = table.must_act().expect("a seat on turn");
                let mv = table.game.as_ref().expect("a game").legal_moves(seat)[0].clone();
                let account_id = player_id(seated[seat].0);
                run(&mut table, TableCommand::Move { account_id, mv });
                moved[seat] = true;
            }
        }
        for (id, _) in persons.iter().rev() {
            if table.status() == domain::Status::Finished {
                break;
            }
            run(
                &mut table,
                TableCommand::Resign {
                    account_id: player_id(*id),
                },
            );
        }
        assert_eq!(table.status(), domain::Status::Finished, "{spec:?}");
        batches
    }

    /// The rated game a stored table ends with, as the server rates it.
    async fn ended(pool: &PgPool, table_id: Uuid, batches: &[Vec<TableEvent>]) -> Option<Ended> {
        let table = Table::from_events(batches.iter().flatten()).expect("a table");
        let end = batches.iter().flatten().find_map(|e| match e {
            TableEvent::Game(Event::GameEnded(end)) => Some(end),
            _ => None,
        })?;
        let game: RatedGame = table.rated_game(end)?;
        let at =
            sqlx::query_scalar("SELECT at FROM events WHERE table_id = $1 AND type = 'game_ended'")
                .bind(table_id)
                .fetch_one(pool)
                .await
                .expect("its end is stored");
        Some(Ended { table_id, at, game })
    }

    /// A correction of the `n`th game stored (modulo their number).
    #[derive(Debug, Clone)]
    enum Fix {
        Void,
        Restore,
        /// Round 1's points, one per seat (as many as it has).
        Points(Vec<i32>),
        /// The seat (modulo the game's seats).
        Disqualify(usize),
    }

    fn fix() -> impl Strategy<Value = (usize, Fix)> {
        let fix = prop_oneof![
            2 => Just(Fix::Void),
            1 => Just(Fix::Restore),
            2 => prop::collection::vec(-20..60i32, 4).prop_map(Fix::Points),
            2 => (0..4usize).prop_map(Fix::Disqualify),
        ];
        (0..64usize, fix)
    }

    /// A stored game: its table, its ruleset, its log and its version.
    struct Stored {
        id: Uuid,
        ruleset: &'static str,
        log: Vec<TableEvent>,
    }

    /// Corrects the game of `stored` as `fix` says, appended to its log as
    /// the server does, and re-rated; nothing when the engine refuses it
    /// (an aborted game, no round ended).
    async fn correct(pool: &PgPool, stored: &mut Stored, fix: Fix, by: &domain::PlayerId) {
        let table = Table::from_events(&stored.log).expect("a table");
        let seats = table.players.len();
        let correction = match fix {
            Fix::Void => Correction::Void {},
            Fix::Restore => Correction::None {},
            Fix::Points(mut points) => {
                points.resize(seats, 0);
                Correction::Points { round: 1, points }
            }
            Fix::Disqualify(seat) => Correction::Disqualify { seat: seat % seats },
        };
        let command = TableCommand::CorrectResult {
            by: by.clone(),
            grounds: domain::table::Grounds::DisputeId(Uuid::new_v4().to_string()),
            correction,
        };
        let mut after = table.clone();
        let Ok(events) = after.execute(&command, &mut rand::thread_rng()) else {
            return;
        };
        let version = stored.log.len() as i64;
        e2e::games::append(pool, stored.id, version, std::slice::from_ref(&events)).await;
        stored.log.extend(events.iter().cloned());
        // As the server rates it, which the log judges the same.
        let game = after.rated_now();
        assert_eq!(game, RatedGame::from_log(&stored.log));
        let change = Rerate::Corrected {
            table_id: stored.id,
            ruleset: stored.ruleset.to_owned(),
            game,
        };
        let mut tx = pool.begin().await.expect("a transaction");
        api::ratings::record(&mut tx, &change)
            .await
            .expect("re-rated");
        tx.commit().await.expect("committed");
    }

    /// Random games, the order their ends commit in, which of those ends
    /// find their ruleset's ratings busy (deferred to the rater), and the
    /// corrections then.
    struct Case {
        specs: Vec<(Spec, usize)>,
        commit_order: Vec<usize>,
        busy: Vec<bool>,
        fixes: Vec<(usize, Fix)>,
    }

    async fn case(
        Case {
            specs,
            commit_order,
            busy,
            fixes,
        }: Case,
    ) {
        let (_, _, pool) = e2e::fresh_database().await;
        let mut accounts = Vec::new();
        for i in 0..ACCOUNTS {
            let id = Uuid::new_v4();
            let name = format!("prop{i}");
            sqlx::query("INSERT INTO accounts (id, username, password_hash) VALUES ($1, $2, 'x')")
                .bind(id)
                .bind(&name)
                .execute(&pool)
                .await
                .expect("an account");
            accounts.push((id, name));
        }
        // Stored in the order of the specs: their ends' times follow it.
        let (mut rated, mut stored) = (Vec::new(), Vec::new());
        for (spec, ruleset) in &specs {
            let batches = log_of(spec, RULESETS[*ruleset], &accounts);
            let id = store_table(&pool, accounts[spec.seats[0]].0, &batches).await;
            stored.push(Stored {
                id,
                ruleset: RULESETS[*ruleset],
                log: batches.iter().flatten().cloned().collect(),
            });
            sqlx::query("UPDATE game_tables SET status = 'finished' WHERE id = $1")
                .bind(id)
                .execute(&pool)
                .await
                .expect("finished");
            rated.push(ended(&pool, id, &batches).await);
        }
        // Rated in another order, each in its own transaction; an end that
        // finds its ruleset busy (another transaction holds its lock) is
        // deferred to the rater.
        let n = rated.len();
        let order = commit_order.into_iter().map(|i| i % n).chain(0..n);
        let mut busy = busy.into_iter();
        for i in order {
            if let Some(ended) = rated[i].take() {
                let mut hold = pool.begin().await.expect("a transaction");
                if busy.next().unwrap_or(false) {
                    store::ratings::lock(&mut hold, &ended.game.ruleset)
                        .await
                        .expect("held");
                }
                let mut tx = pool.begin().await.expect("a transaction");
                let change = Rerate::Ended(ended);
                api::ratings::record(&mut tx, &change).await.expect("rated");
                tx.commit().await.expect("committed");
                hold.rollback().await.expect("let go");
            }
        }
        // Then corrected, in any order, some games more than once (some of
        // them still waiting for the rater), then the rater's passes.
        let by = player_id(accounts[0].0);
        for (i, fix) in fixes {
            correct(&pool, &mut stored[i % n], fix, &by).await;
        }
        while api::ratings::rate_deferred(&pool).await.expect("rated") > 0 {}
        let expected = stored
            .iter()
            .filter(|s| RatedGame::from_log(&s.log).is_some())
            .count();
        let rebuilt = api::ratings::rebuild(&pool, false, |_| {})
            .await
            .expect("rebuilt");
        assert_eq!(rebuilt.different, 0, "{:?}", rebuilt.differences);
        assert_eq!(rebuilt.games, expected);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

        #[test]
        fn stored_ratings_are_the_fold_of_the_logs_whatever_order_games_commit_in_and_are_corrected(
            specs in prop::collection::vec((spec(), 0..RULESETS.len()), 1..8),
            commit_order in prop::collection::vec(0..64usize, 0..8),
            busy in prop::collection::vec(any::<bool>(), 0..8),
            fixes in prop::collection::vec(fix(), 0..6),
        ) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(case(Case {
                specs,
                commit_order,
                busy,
                fixes,
            }));
        }
    }
}
