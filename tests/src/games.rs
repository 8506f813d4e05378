//! Seeded games played in-process with the engine and stored through the
//! event store, without the table endpoints. Also compiled into the api
//! crate's CLI tests (`#[path]`), so it only uses `api`, `domain`, `rand`,
//! `serde_json`, `sqlx` and `uuid`.

use api::error::ApiError;
use api::log::announce::{announce, Announced};
use api::table_service::player_id;
use domain::table::{Newcomer, Table, TableCommand, TableError, TableEvent};
use domain::{ClientSeed, Fair, SeedHash, ServerSeed};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use sqlx::PgPool;
use store::chain::GENESIS_PREV_HASH;
use store::events;
use store::{ChainedAppend, NewEvent, StoredEvent};
use uuid::Uuid;

/// A whole game's log, batch by batch (one batch per command, as the API
/// would append them).
#[derive(Debug, Clone)]
pub struct PlayedGame {
    pub batches: Vec<Vec<TableEvent>>,
}

impl PlayedGame {
    pub fn events(&self) -> impl Iterator<Item = &TableEvent> {
        self.batches.iter().flatten()
    }

    /// The batches up to and including the one holding the `round_ended` of
    /// round `n` (which also deals round n+1 when the game goes on).
    pub fn through_round(&self, n: u32) -> Vec<Vec<TableEvent>> {
        let end = self
            .batches
            .iter()
            .position(|b| {
                b.iter().any(|e| {
                    matches!(e, TableEvent::Game(domain::Event::RoundEnded(re)) if re.round == n)
                })
            })
            .expect("the round ends in this game");
        self.batches[..=end].to_vec()
    }

    /// The batches up to `moves` commands into round `n` (still running).
    pub fn partway_into_round(&self, n: u32, moves: usize) -> Vec<Vec<TableEvent>> {
        let start = self
            .batches
            .iter()
            .position(|b| {
                b.iter().any(|e| {
                    matches!(e, TableEvent::Game(domain::Event::RoundStarted(rs)) if rs.round == n)
                })
            })
            .expect("the round is dealt in this game");
        self.batches[..=start + moves].to_vec()
    }
}

/// Plays a whole game of `ruleset` (with `options`) between `players`
/// (account id, username), the first being the creator, choosing seeded
/// random legal moves.
pub fn play_game(
    ruleset: &str,
    options: serde_json::Value,
    players: &[(Uuid, String)],
    seed: u64,
) -> PlayedGame {
    let by_rng = |t: &mut Table, c: &TableCommand, rng: &mut StdRng| t.execute(c, rng);
    play_game_by(ruleset, options, players, seed, by_rng, None)
}

/// [`play_game`] dealt fairly (docs/API.md "Fair deals"): the table `table`
/// committed to `server_seed`, each player bringing a seed of their own,
/// every shuffle the contract's.
pub fn play_fair_game(
    ruleset: &str,
    options: serde_json::Value,
    players: &[(Uuid, String)],
    seed: u64,
    (server_seed, table): (&ServerSeed, Uuid),
) -> PlayedGame {
    let table = table.to_string();
    let mut fair = Fair {
        seed: server_seed,
        table: &table,
    };
    let by_seed = |t: &mut Table, c: &TableCommand, _: &mut StdRng| t.execute(c, &mut fair);
    let commitment = Some(server_seed.hash());
    play_game_by(ruleset, options, players, seed, by_seed, commitment)
}

/// The game, each command executed by `execute` (given the moves'
/// generator, which shuffles too in [`play_game`]).
fn play_game_by(
    ruleset: &str,
    options: serde_json::Value,
    players: &[(Uuid, String)],
    seed: u64,
    mut execute: impl FnMut(
        &mut Table,
        &TableCommand,
        &mut StdRng,
    ) -> Result<Vec<TableEvent>, TableError>,
    commitment: Option<SeedHash>,
) -> PlayedGame {
    let mut rng = StdRng::seed_from_u64(seed);
    let options = options.as_object().cloned().unwrap_or_default();
    let newcomer = |(id, name): &(Uuid, String)| Newcomer {
        account_id: player_id(*id),
        guest: false,
        client_seed: commitment.map(|_| ClientSeed::new(format!("{name}-seed")).expect("a seed")),
    };
    let creator = newcomer(&players[0]);
    let lobby = domain::Lobby::default();
    let seats = players.len();
    let created = Table::open(ruleset, &options, seats, None, &lobby, &creator, commitment)
        .expect("the table is created");
    let mut table = Table::from_events(&created).expect("a table");
    let mut batches = vec![created];
    for player in &players[1..] {
        let joiner = newcomer(player);
        let cmd = TableCommand::Join {
            account_id: joiner.account_id,
            joining: domain::Joining::Open,
            guest: false,
            client_seed: joiner.client_seed,
        };
        batches.push(execute(&mut table, &cmd, &mut rng).expect("joins"));
    }
    let start = TableCommand::Start {
        account_id: creator.account_id,
    };
    batches.push(execute(&mut table, &start, &mut rng).expect("starts"));
    for _ in 0..200_000 {
        let game = table.game.as_ref().expect("started");
        if game.result().is_some() {
            return PlayedGame { batches };
        }
        let round = game.round().expect("a round");
        let current = round.current.expect("someone is on turn");
        // Mostly the seat on turn; now and then a challenger when one can.
        let mut choices: Vec<(usize, domain::Move)> = Vec::new();
        if rng.gen_bool(0.3) {
            for seat in (0..game.seats()).filter(|s| *s != current) {
                choices.extend(game.legal_moves(seat).into_iter().map(|m| (seat, m)));
            }
        }
        if choices.is_empty() {
            choices = game
                .legal_moves(current)
                .into_iter()
                .map(|m| (current, m))
                .collect();
        }
        assert!(!choices.is_empty(), "the seat on turn has a legal move");
        let (seat, mv) = choices[rng.gen_range(0..choices.len())].clone();
        let account_id = table
            .seated()
            .find(|p| p.seat == seat)
            .expect("seated")
            .account_id
            .clone();
        let cmd = TableCommand::Move { account_id, mv };
        batches.push(execute(&mut table, &cmd, &mut rng).expect("a legal move"));
    }
    panic!("the game did not end within 200000 moves");
}

/// Creates the `game_tables` row of a table owned by `creator` and appends
/// `batches`, one transaction per batch. Returns the table id.
pub async fn store_table(pool: &PgPool, creator: Uuid, batches: &[Vec<TableEvent>]) -> Uuid {
    let id = Uuid::new_v4();
    store_table_at(pool, id, creator, batches).await;
    id
}

/// [`store_table`] with the id `id` (a fair game's shuffles name it).
pub async fn store_table_at(pool: &PgPool, id: Uuid, creator: Uuid, batches: &[Vec<TableEvent>]) {
    store::tables::insert(pool, id, "test", creator)
        .await
        .expect("the table row is inserted");
    append(pool, id, 0, batches).await;
}

/// Appends `batches` after `version` and announces the new version to
/// every server process, as the server does; returns the new version.
pub async fn append(pool: &PgPool, id: Uuid, version: i64, batches: &[Vec<TableEvent>]) -> i64 {
    let version = append_unannounced(pool, id, version, batches).await;
    announce(pool, &[Announced::Table(id, Some(version))])
        .await
        .expect("the new version is announced");
    version
}

/// Appends `batches` after `version`, one transaction each, without telling
/// anyone (a notification lost); returns the new version.
pub async fn append_unannounced(
    pool: &PgPool,
    id: Uuid,
    mut version: i64,
    batches: &[Vec<TableEvent>],
) -> i64 {
    for batch in batches {
        let new: Vec<NewEvent> = batch.iter().map(NewEvent::sealed).collect();
        let mut tx = pool.begin().await.expect("a transaction");
        append_at(&mut tx, id, version, &new)
            .await
            .expect("the events are appended");
        tx.commit().await.expect("commit");
        version += new.len() as i64;
    }
    version
}

/// Appends `events` after `expected_version` on `conn` (a transaction
/// left to the caller), chained to the hash stored for that event: the
/// tests' way to write a log (the server's, [`api::log::Log::append`],
/// chains to the head it has cached). Refused as the server's append is.
pub async fn append_at(
    conn: &mut sqlx::PgConnection,
    table: Uuid,
    expected_version: i64,
    events: &[NewEvent],
) -> Result<Vec<StoredEvent>, ApiError> {
    let conflict = ApiError::VersionConflict {
        expected: expected_version,
    };
    let prev_hash = match expected_version {
        0 => GENESIS_PREV_HASH.to_owned(),
        v => events::head_hash(&mut *conn, table, v)
            .await?
            .ok_or(conflict)?,
    };
    let chained = ChainedAppend::new(table, expected_version, &prev_hash, events.to_vec(), None);
    events::insert_one(conn, &chained, store::feed::Outbox::OFF).await?;
    Ok(chained.events)
}

/// Direct changes to the events table, as someone with database access
/// could make them (the append-only trigger is disabled first).
pub mod tamper {
    use sqlx::PgPool;
    use uuid::Uuid;

    /// `ALTER TABLE events DISABLE TRIGGER USER` (needs a superuser or the
    /// table's owner, as on the test cluster).
    pub async fn allow_changes(pool: &PgPool) {
        sqlx::query("ALTER TABLE events DISABLE TRIGGER USER")
            .execute(pool)
            .await
            .expect("the append-only trigger is disabled");
    }

    /// The seq of the first event of `kind` after `after`.
    pub async fn seq_of(pool: &PgPool, table: Uuid, kind: &str, after: i64) -> i64 {
        sqlx::query_scalar(
            "SELECT seq FROM events WHERE table_id = $1 AND type = $2 AND seq > $3 ORDER BY seq LIMIT 1",
        )
        .bind(table)
        .bind(kind)
        .bind(after)
        .fetch_one(pool)
        .await
        .expect("such an event")
    }

    /// Sets `data.<field>` of an event to `value`.
    pub async fn edit_data(
        pool: &PgPool,
        table: Uuid,
        seq: i64,
        field: &str,
        value: serde_json::Value,
    ) {
        sqlx::query("UPDATE events SET data = jsonb_set(data::jsonb, ARRAY[$3], $4)::json WHERE table_id = $1 AND seq = $2")
            .bind(table)
            .bind(seq)
            .bind(field)
            .bind(value)
            .execute(pool)
            .await
            .expect("edited");
    }

    /// Replaces an event's data with something that is not that event.
    pub async fn garble(pool: &PgPool, table: Uuid, seq: i64) {
        sqlx::query(
            r#"UPDATE events SET data = '{"garbage": [1, 2]}' WHERE table_id = $1 AND seq = $2"#,
        )
        .bind(table)
        .bind(seq)
        .execute(pool)
        .await
        .expect("garbled");
    }

    /// Exchanges the seqs of two rows.
    pub async fn swap(pool: &PgPool, table: Uuid, a: i64, b: i64) {
        for (from, to) in [(a, 1_000_000), (b, a), (1_000_000, b)] {
            sqlx::query("UPDATE events SET seq = $3 WHERE table_id = $1 AND seq = $2")
                .bind(table)
                .bind(from)
                .bind(to)
                .execute(pool)
                .await
                .expect("moved");
        }
    }

    pub async fn delete(pool: &PgPool, table: Uuid, seq: i64) {
        sqlx::query("DELETE FROM events WHERE table_id = $1 AND seq = $2")
            .bind(table)
            .bind(seq)
            .execute(pool)
            .await
            .expect("deleted");
    }

    /// Inserts a copy of event `seq` right after it (the later rows move up
    /// one seq), linked to it by `prev_hash`, its hash copied.
    pub async fn insert_copy_after(pool: &PgPool, table: Uuid, seq: i64) {
        for shift in [
            "UPDATE events SET seq = seq + 1000000 WHERE table_id = $1 AND seq > $2",
            "UPDATE events SET seq = seq - 999999 WHERE table_id = $1 AND seq > 1000000",
        ] {
            sqlx::query(shift)
                .bind(table)
                .bind(seq)
                .execute(pool)
                .await
                .expect("shifted");
        }
        sqlx::query(
            r#"INSERT INTO events (table_id, seq, type, v, at, data, prev_hash, hash)
               SELECT table_id, seq + 1, type, v, at, data, hash, hash
               FROM events WHERE table_id = $1 AND seq = $2"#,
        )
        .bind(table)
        .bind(seq)
        .execute(pool)
        .await
        .expect("inserted");
    }

    /// Recomputes `prev_hash` and `hash` of every event from `from` on, as
    /// a forger would to keep the chain valid.
    pub async fn rechain(pool: &PgPool, table: Uuid, from: i64) {
        let rows = store::events::read_after(pool, table, from - 1, 1_000_000)
            .await
            .expect("read");
        let mut prev: String = if from == 1 {
            store::chain::GENESIS_PREV_HASH.to_owned()
        } else {
            sqlx::query_scalar("SELECT hash FROM events WHERE table_id = $1 AND seq = $2")
                .bind(table)
                .bind(from - 1)
                .fetch_one(pool)
                .await
                .expect("the previous hash")
        };
        for e in rows {
            let at = store::chain::format_at(e.at);
            let hash = store::chain::event_hash(&prev, e.seq, &e.kind, e.v, &at, &e.data);
            sqlx::query(
                "UPDATE events SET prev_hash = $3, hash = $4 WHERE table_id = $1 AND seq = $2",
            )
            .bind(table)
            .bind(e.seq)
            .bind(&prev)
            .bind(&hash)
            .execute(pool)
            .await
            .expect("rechained");
            prev = hash;
        }
    }
}
