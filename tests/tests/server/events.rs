//! The event store: append with hash chain and optimistic lock, read,
//! append-only trigger, LISTEN/NOTIFY wake-ups, idempotency keys.

use std::time::Duration;

use api::error::ApiError;
use api::log::announce::{announce, Announced};
use api::log::hub::CommitHub;
use api::log::versions::{self, Reads};
use api::log::writer::LogWriter;
use e2e::fresh_database;
use e2e::games::append_at;
use futures_util::future::join_all;
use futures_util::TryStreamExt;
use serde_json::json;
use sqlx::PgPool;
use store::chain::{verify_chain, GENESIS_PREV_HASH};
use store::copy::{CopyRows, LogCopy};
use store::events::{self, Appended};
use store::{self, accounts::Role, StoreError};
use store::{ChainedAppend, NewEvent};
use tokio::time::Instant;
use uuid::Uuid;

async fn new_table(pool: &PgPool) -> Uuid {
    let owner = store::accounts::insert(
        pool,
        &format!("u{}", &Uuid::new_v4().simple().to_string()[..10]),
        "$argon2id$not-a-real-hash",
        Role::Player,
    )
    .await
    .unwrap();
    let id = Uuid::new_v4();
    store::tables::insert(pool, id, "classic", owner.id)
        .await
        .unwrap();
    id
}

fn batch(kinds: &[&str]) -> Vec<NewEvent> {
    kinds
        .iter()
        .enumerate()
        .map(|(i, k)| {
            NewEvent::new(
                *k,
                1,
                json!({"i": i, "note": "é \"q\" \n", "nested": {"b": [1, 2], "a": null}}),
            )
        })
        .collect()
}

/// A log is read (a process's first use of a table) by walking the
/// events' primary key in seq order, whatever the statistics say. Here
/// they say that this table's rows are the whole of `events`, so that
/// sorting what a scan of the table finds looked cheaper (a long log
/// sorted on disk, at twice the cost).
#[tokio::test]
async fn a_log_is_copied_in_seq_order_by_its_primary_key_without_a_sort() {
    let (_, _, pool) = fresh_database().await;
    let table = new_table(&pool).await;
    let mut tx = pool.begin().await.unwrap();
    append_at(&mut tx, table, 0, &batch(&["turn_passed"; 300]))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    sqlx::query("ANALYZE events").execute(&pool).await.unwrap();

    let mut log = LogCopy::begin(&pool).await.unwrap();
    let plan = log.plan(table, 0).await.unwrap();
    log.end().await.unwrap();
    assert!(
        plan[0].starts_with("Index Scan using events_pkey") && plan.len() == 2,
        "{plan:#?}"
    );
}

/// A copied log carries each event's format: `v` travels only where it is
/// not the current format (a null otherwise), and reads back as stored
/// either way, with the data's text.
#[tokio::test]
async fn a_copied_log_reads_back_each_events_format_and_data() {
    let (_, _, pool) = fresh_database().await;
    let table = new_table(&pool).await;
    let current = domain::EVENT_VERSION as i32;
    let mut events = batch(&["turn_passed", "turn_passed", "turn_passed"]);
    events[1] = NewEvent::new("turn_passed", current, json!({"seat": 1, "é": "\n"}));
    let mut tx = pool.begin().await.unwrap();
    append_at(&mut tx, table, 0, &events).await.unwrap();
    tx.commit().await.unwrap();

    let mut log = LogCopy::begin(&pool).await.unwrap();
    let mut chunks = log.data_after(table, 1).await.unwrap();
    let (mut rows, mut copied) = (CopyRows::default(), store::EventRows::default());
    while let Some(chunk) = chunks.try_next().await.unwrap() {
        rows.feed(&chunk, &mut copied).unwrap();
    }
    drop(chunks);
    log.end().await.unwrap();
    assert!(rows.ended());
    let stored = events::read_after(&pool, table, 1, 10).await.unwrap();
    let read: Vec<_> = stored
        .iter()
        .map(|e| (e.seq, e.kind.as_str(), e.v, e.data.clone()))
        .collect();
    let copied: Vec<_> = copied
        .iter()
        .map(|e| {
            let data: serde_json::Value = serde_json::from_str(e.data).unwrap();
            (e.seq, e.kind, e.v, data)
        })
        .collect();
    assert_eq!(copied, read);
    assert_eq!(copied.iter().map(|e| e.2).collect::<Vec<_>>(), [current, 1]);
}

#[tokio::test]
async fn appended_events_chain_and_read_back_identically() {
    let (_, _, pool) = fresh_database().await;
    let table = new_table(&pool).await;

    let mut tx = pool.begin().await.unwrap();
    let first = append_at(
        &mut tx,
        table,
        0,
        &batch(&["table_created", "player_joined"]),
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(first[0].seq, 1);
    assert_eq!(first[0].prev_hash, GENESIS_PREV_HASH);
    assert_eq!(first[1].prev_hash, first[0].hash);

    let mut tx = pool.begin().await.unwrap();
    let second = append_at(&mut tx, table, 2, &batch(&["round_started"]))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(second[0].seq, 3);
    assert_eq!(second[0].prev_hash, first[1].hash);

    let read = events::read_after(&pool, table, 0, 100).await.unwrap();
    assert_eq!(read.len(), 3);
    assert_eq!(read[..2], first[..]);
    assert_eq!(read[2], second[0]);
    verify_chain(&read).unwrap();
    assert_eq!(
        events::read_after(&pool, table, 2, 100).await.unwrap(),
        second
    );
    assert_eq!(
        events::read_after(&pool, table, 0, 1).await.unwrap().len(),
        1
    );
    assert_eq!(
        events::current_version(&pool, table).await.unwrap(),
        Some(3)
    );

    // The public format.
    let line = serde_json::to_value(&read[0]).unwrap();
    let keys: Vec<&str> = line
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys.len(), 7, "{keys:?}");
    let at = line["at"].as_str().unwrap();
    assert_eq!(at.len(), "2025-01-31T18:04:05.123456Z".len(), "{at}");
    assert!(at.ends_with('Z'));

    // Tampering is detected.
    let mut forged = read.clone();
    forged[1].data = json!({"i": 99});
    assert!(verify_chain(&forged).is_err());
}

#[tokio::test]
async fn a_stale_or_future_version_is_a_conflict_and_writes_nothing() {
    let (_, _, pool) = fresh_database().await;
    let table = new_table(&pool).await;
    let mut tx = pool.begin().await.unwrap();
    append_at(&mut tx, table, 0, &batch(&["a", "b"]))
        .await
        .unwrap();
    tx.commit().await.unwrap();

    for expected in [-1, 0, 1, 3, 7] {
        let mut tx = pool.begin().await.unwrap();
        let err = append_at(&mut tx, table, expected, &batch(&["c"]))
            .await
            .unwrap_err();
        assert!(
            matches!(err, ApiError::VersionConflict { expected: e } if e == expected),
            "{err:?}"
        );
        drop(tx);
    }
    assert_eq!(
        events::read_after(&pool, table, 0, 100)
            .await
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        events::current_version(&pool, table).await.unwrap(),
        Some(2)
    );
}

#[tokio::test]
async fn of_two_concurrent_appends_at_one_version_exactly_one_commits() {
    let (_, _, pool) = fresh_database().await;
    let table = new_table(&pool).await;

    let mut tx1 = pool.begin().await.unwrap();
    let mut tx2 = pool.begin().await.unwrap();
    append_at(&mut tx1, table, 0, &batch(&["first"]))
        .await
        .unwrap();
    // tx2 blocks on the primary key until tx1 commits, then fails.
    let second = tokio::spawn(async move {
        let r = append_at(&mut tx2, table, 0, &batch(&["second"])).await;
        (r.map(|_| ()), tx2)
    });
    tx1.commit().await.unwrap();
    let (result, _tx2) = second.await.unwrap();
    assert!(
        matches!(result, Err(ApiError::VersionConflict { expected: 0 })),
        "{result:?}"
    );
    let log = events::read_after(&pool, table, 0, 10).await.unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].kind, "first");
}

#[tokio::test]
async fn appending_to_a_table_that_does_not_exist_is_404() {
    let (_, _, pool) = fresh_database().await;
    let mut tx = pool.begin().await.unwrap();
    let err = append_at(&mut tx, Uuid::new_v4(), 0, &batch(&["x"]))
        .await
        .unwrap_err();
    assert!(matches!(err, ApiError::NotFound(_)), "{err:?}");
}

#[tokio::test]
async fn events_are_append_only() {
    let (_, _, pool) = fresh_database().await;
    let table = new_table(&pool).await;
    let mut tx = pool.begin().await.unwrap();
    append_at(&mut tx, table, 0, &batch(&["a"])).await.unwrap();
    tx.commit().await.unwrap();
    for sql in [
        "UPDATE events SET data = '{}'",
        "DELETE FROM events",
        "TRUNCATE events CASCADE",
    ] {
        let err = sqlx::query(sql).execute(&pool).await.unwrap_err();
        assert!(err.to_string().contains("append-only"), "{sql}: {err}");
    }
    assert_eq!(
        events::read_after(&pool, table, 0, 10).await.unwrap().len(),
        1
    );
}

/// The log's own check on hashes (migration 5 respells it): exactly 64
/// lowercase hexadecimal digits, for `hash` and `prev_hash` alike.
#[tokio::test]
async fn the_log_refuses_a_hash_that_is_not_64_lowercase_hex_digits() {
    let (_, _, pool) = fresh_database().await;
    let table = new_table(&pool).await;
    let good = "0123456789abcdef".repeat(4);
    let insert = |seq: i64, prev_hash: String, hash: String| {
        let pool = pool.clone();
        async move {
            sqlx::query(
                "INSERT INTO events (table_id, seq, type, v, at, data, prev_hash, hash)
                 VALUES ($1, $2, 'x', 1, now(), '{}', $3, $4)",
            )
            .bind(table)
            .bind(seq)
            .bind(prev_hash)
            .bind(hash)
            .execute(&pool)
            .await
        }
    };
    let bad = [
        "0123456789ABCDEF".repeat(4), // upper case
        good[..63].to_owned(),        // too short
        format!("{good}0"),           // too long
        format!("{}g", &good[..63]),  // not hex
        format!("{} ", &good[..63]),  // a blank
        format!("{}é", &good[..62]),  // 64 bytes, 63 characters
        format!("{}\n", &good[..63]), // a line break
        String::new(),
    ];
    for (i, b) in bad.iter().enumerate() {
        for (column, prev_hash, hash) in [
            ("events_prev_hash_hex", b.clone(), good.clone()),
            ("events_hash_hex", good.clone(), b.clone()),
        ] {
            let err = insert(1 + i as i64, prev_hash, hash).await.unwrap_err();
            let db = err.as_database_error().expect("a database error");
            assert_eq!(db.constraint(), Some(column), "{b:?}: {err}");
        }
    }
    insert(1, good.clone(), good.clone()).await.unwrap();
}
fn stored_seqs(events: &[store::StoredEvent]) -> Vec<i64> {
    events.iter().map(|e| e.seq).collect()
}

/// An event at seq 1 written behind `game_tables`' back (its version stays
/// 0): an append at version 0 collides with it on the primary key.
async fn plant_seq_1(pool: &PgPool, table: Uuid) {
    let hash = "ab".repeat(32);
    sqlx::query(
        "INSERT INTO events (table_id, seq, type, v, at, data, prev_hash, hash)
         VALUES ($1, 1, 'planted', 1, now(), '{}', $2, $3)",
    )
    .bind(table)
    .bind(GENESIS_PREV_HASH)
    .bind(hash)
    .execute(pool)
    .await
    .unwrap();
}

/// How many transactions wrote the events of `tables` after `after`.
async fn writing_transactions(pool: &PgPool, tables: &[Uuid], after: i64) -> i64 {
    sqlx::query_scalar(
        "SELECT count(DISTINCT xmin::text) FROM events WHERE table_id = ANY($1) AND seq > $2",
    )
    .bind(tables)
    .bind(after)
    .fetch_one(pool)
    .await
    .unwrap()
}

#[tokio::test]
async fn one_statement_appends_the_events_of_several_tables_and_leaves_a_stale_one_alone() {
    let (_, _, pool) = fresh_database().await;
    let mut tables = Vec::new();
    for _ in 0..3 {
        tables.push(new_table(&pool).await);
    }
    let mut conn = pool.acquire().await.unwrap();
    append_at(&mut conn, tables[2], 0, &batch(&["first"]))
        .await
        .unwrap();
    let statuses = [Some("finished"), None, None];
    let chained: Vec<ChainedAppend> = tables
        .iter()
        .zip(statuses)
        .map(|(t, status)| ChainedAppend::new(*t, 0, GENESIS_PREV_HASH, batch(&["a", "b"]), status))
        .collect();
    let refs: Vec<&ChainedAppend> = chained.iter().collect();
    let done = events::insert_batch(&mut conn, &refs, store::feed::Outbox::OFF)
        .await
        .unwrap();
    assert_eq!(
        done,
        [Appended::Stored, Appended::Stored, Appended::NotAtVersion]
    );
    for (table, chained) in tables.iter().zip(&chained).take(2) {
        let log = events::read_after(&pool, *table, 0, 10).await.unwrap();
        assert_eq!(log, chained.events, "stored as chained");
        verify_chain(&log).unwrap();
        assert_eq!(
            events::current_version(&pool, *table).await.unwrap(),
            Some(2)
        );
    }
    let status = |t: Uuid| {
        sqlx::query_scalar::<_, String>("SELECT status FROM game_tables WHERE id = $1")
            .bind(t)
            .fetch_one(&pool)
    };
    assert_eq!(status(tables[0]).await.unwrap(), "finished");
    assert_eq!(status(tables[1]).await.unwrap(), "waiting");
    // The stale table: only its own first event, at version 1.
    let log = events::read_after(&pool, tables[2], 0, 10).await.unwrap();
    assert_eq!(stored_seqs(&log), [1]);
    assert_eq!(log[0].kind, "first");
    assert_eq!(
        events::current_version(&pool, tables[2]).await.unwrap(),
        Some(1)
    );
    // One statement, one transaction.
    assert_eq!(writing_transactions(&pool, &tables[..2], 0).await, 1);
}

#[tokio::test]
async fn a_batch_that_postgresql_refuses_writes_nothing_of_any_table() {
    let (_, _, pool) = fresh_database().await;
    let (fine, trapped) = (new_table(&pool).await, new_table(&pool).await);
    plant_seq_1(&pool, trapped).await;
    let chained: Vec<ChainedAppend> = [fine, trapped]
        .iter()
        .map(|t| ChainedAppend::new(*t, 0, GENESIS_PREV_HASH, batch(&["a"]), None))
        .collect();
    let refs: Vec<&ChainedAppend> = chained.iter().collect();
    let mut conn = pool.acquire().await.unwrap();
    let err = events::insert_batch(&mut conn, &refs, store::feed::Outbox::OFF)
        .await
        .unwrap_err();
    let db = err.as_database_error().expect("refused by PostgreSQL");
    assert_eq!(db.constraint(), Some("events_pkey"));
    assert!(events::read_after(&pool, fine, 0, 10)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(events::current_version(&pool, fine).await.unwrap(), Some(0));
    assert_eq!(
        events::current_version(&pool, trapped).await.unwrap(),
        Some(0)
    );
}

#[tokio::test]
async fn the_log_writer_appends_moves_of_many_tables_together_and_answers_each() {
    let (_, _, pool) = fresh_database().await;
    let writer = LogWriter::new(&pool, store::feed::Outbox::OFF);
    let mut tables = Vec::new();
    for _ in 0..10 {
        tables.push(new_table(&pool).await);
    }
    // Moves of ten tables at once: one statement for all.
    let appends = tables.iter().map(|t| {
        let chained = ChainedAppend::new(*t, 0, GENESIS_PREV_HASH, batch(&["a", "b"]), None);
        writer.append(chained)
    });
    for (table, answer) in tables.iter().zip(join_all(appends).await) {
        let stored = answer.unwrap();
        assert_eq!(stored_seqs(&stored), [1, 2]);
        assert_eq!(
            events::read_after(&pool, *table, 0, 10).await.unwrap(),
            stored
        );
    }
    assert_eq!(writing_transactions(&pool, &tables, 0).await, 1);

    // With a stale move and one whose seq is taken (the statement is
    // refused, so each move goes again alone): those two get their
    // conflict, the others are stored.
    let (stale, trapped) = (new_table(&pool).await, new_table(&pool).await);
    plant_seq_1(&pool, trapped).await;
    let mut moves: Vec<ChainedAppend> = Vec::new();
    for t in &tables {
        let log = events::read_after(&pool, *t, 0, 10).await.unwrap();
        moves.push(ChainedAppend::new(*t, 2, &log[1].hash, batch(&["c"]), None));
    }
    moves.push(ChainedAppend::new(
        stale,
        5,
        &"cd".repeat(32),
        batch(&["c"]),
        None,
    ));
    moves.push(ChainedAppend::new(
        trapped,
        0,
        GENESIS_PREV_HASH,
        batch(&["c"]),
        None,
    ));
    let answers = join_all(moves.into_iter().map(|c| writer.append(c))).await;
    for answer in &answers[..10] {
        assert_eq!(stored_seqs(answer.as_ref().unwrap()), [3]);
    }
    for answer in &answers[10..] {
        assert!(
            matches!(answer, Err(StoreError::Conflict { .. })),
            "{answer:?}"
        );
    }
    for t in &tables {
        assert_eq!(events::current_version(&pool, *t).await.unwrap(), Some(3));
    }
    assert_eq!(
        events::current_version(&pool, stale).await.unwrap(),
        Some(0)
    );
    assert_eq!(
        stored_seqs(&events::read_after(&pool, trapped, 0, 10).await.unwrap()),
        [1]
    );
}

/// An actix worker is a runtime on one thread: a task spawned there only
/// runs when the worker is not computing (a password hash takes tens of
/// milliseconds). The writer tasks run on the runtime that made the writer,
/// so a move is written while the worker that asked for it is busy.
#[tokio::test]
async fn a_move_is_written_while_the_worker_that_asked_for_it_computes() {
    let (_, _, pool) = fresh_database().await;
    let writer = LogWriter::new(&pool, store::feed::Outbox::OFF);
    let table = new_table(&pool).await;
    let asking = writer.clone();
    let (asked, busy) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let chained = ChainedAppend::new(table, 0, GENESIS_PREV_HASH, batch(&["a"]), None);
            let append = asking.append(chained);
            tokio::pin!(append);
            // Queued (and a writer started) on the first poll.
            let first = tokio::time::timeout(Duration::from_millis(1), &mut append).await;
            assert!(first.is_err(), "not written within a millisecond");
            asked.send(()).unwrap();
            // The worker computes for 3 s, its thread never yielding.
            std::thread::sleep(Duration::from_secs(3));
            append.await
        })
    });
    busy.recv().unwrap();
    let deadline = Instant::now() + Duration::from_secs(2);
    while events::current_version(&pool, table).await.unwrap() != Some(1) {
        assert!(
            Instant::now() < deadline,
            "the move waited for the busy worker"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let stored = worker.join().unwrap().unwrap();
    assert_eq!(stored_seqs(&stored), [1]);
}

/// The wake-up hub of a second "process" on the database of `pool`: its
/// own pool and LISTEN connection.
async fn another_process(pool: &PgPool) -> (CommitHub, tokio::task::JoinHandle<()>) {
    let listener_pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .connect_with((*pool.connect_options()).clone())
        .await
        .unwrap();
    CommitHub::start(listener_pool).await
}

#[tokio::test]
async fn an_announced_commit_wakes_listeners_of_that_table_in_another_process() {
    let (_, _, pool) = fresh_database().await;
    let table = new_table(&pool).await;
    let other = new_table(&pool).await;
    let (hub, _task) = another_process(&pool).await;
    let mut rx = hub.subscribe(table);
    let rx_other = hub.subscribe(other);

    let mut tx = pool.begin().await.unwrap();
    append_at(&mut tx, table, 0, &batch(&["a"])).await.unwrap();
    tx.commit().await.unwrap();
    // The commit alone tells nobody (its NOTIFY would serialise the commits
    // of all tables); its announcement does, with the version.
    let short = Instant::now() + Duration::from_millis(200);
    assert!(!hub.wait(&mut rx, short).await);
    announce(&pool, &[Announced::Table(table, Some(1))])
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    assert!(
        hub.wait(&mut rx, deadline).await,
        "woken by the announcement"
    );
    assert_eq!(hub.heard(table).map(|(_, version)| version), Some(1));
    assert!(!rx_other.has_changed().unwrap());
    assert_eq!(hub.heard(other).map(|(_, version)| version), Some(0));
}

/// Many tables' versions go in one notification (a packed payload): a
/// listener in another process wakes the waiters of each, and notes each
/// version.
#[tokio::test]
async fn one_announcement_of_many_tables_wakes_each_of_them_in_another_process() {
    let (_, _, pool) = fresh_database().await;
    let (hub, _task) = another_process(&pool).await;
    let mut tables = Vec::new();
    for _ in 0..3 {
        tables.push(new_table(&pool).await);
    }
    let quiet = new_table(&pool).await;
    let mut receivers: Vec<_> = tables.iter().map(|t| hub.subscribe(*t)).collect();
    let rx_quiet = hub.subscribe(quiet);
    let versions: Vec<Announced> = tables
        .iter()
        .enumerate()
        .map(|(i, t)| Announced::Table(*t, Some(i as i64 + 5)))
        .collect();
    announce(&pool, &versions).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    for ((table, version), rx) in tables.iter().zip(5..).zip(&mut receivers) {
        assert!(hub.wait(rx, deadline).await, "table at {version} woken");
        assert_eq!(hub.heard(*table).map(|(_, v)| v), Some(version));
    }
    assert!(!rx_quiet.has_changed().unwrap(), "a table not announced");
}

#[tokio::test]
async fn idempotency_keys_replay_or_refuse() {
    use store::idempotency::{self, request_hash};
    let (_, _, pool) = fresh_database().await;
    let table = new_table(&pool).await;
    let account: Uuid = sqlx::query_scalar("SELECT id FROM accounts LIMIT 1")
        .fetch_one(&pool)
        .await
        .unwrap();
    let body = br#"{"move":{"type":"draw"}}"#;
    let h = request_hash(body);
    assert!(idempotency::find(&pool, table, account, "k1")
        .await
        .unwrap()
        .is_none());
    idempotency::save(&pool, table, account, "k1", &h, 200, &json!({"version": 4}))
        .await
        .unwrap();
    let stored = idempotency::find(&pool, table, account, "k1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.status, 200);
    assert_eq!(stored.body, json!({"version": 4}));
    assert_eq!(stored.request_hash, h, "what a replay is checked against");
    let again = idempotency::save(&pool, table, account, "k1", &h, 200, &json!({})).await;
    assert!(matches!(again, Err(StoreError::KeyInUse)), "{again:?}");
}

/// Version reads asked together share one query; each gets its own table's
/// version, `None` for a table that does not exist, duplicates included.
#[tokio::test]
async fn version_reads_asked_together_answer_each_table() {
    let (_, _, pool) = fresh_database().await;
    let reads = Reads::batcher(&pool);
    let (fresh, moved) = (new_table(&pool).await, new_table(&pool).await);
    LogWriter::new(&pool, store::feed::Outbox::OFF)
        .append(ChainedAppend::new(
            moved,
            0,
            GENESIS_PREV_HASH,
            batch(&["a", "b"]),
            None,
        ))
        .await
        .unwrap();
    let asked = [fresh, moved, Uuid::new_v4(), moved, fresh];
    let answers = join_all(asked.iter().map(|t| versions::stored_version(&reads, *t))).await;
    let answers: Vec<Option<i64>> = answers.into_iter().map(Result::unwrap).collect();
    assert_eq!(answers, [Some(0), Some(2), None, Some(2), Some(0)]);
}

/// The version reads keep their connection between reads (no pool, no ping
/// on release). One that died while idle for a second is pinged, found
/// dead and replaced before the read; one that died as it was being used
/// fails that read (503) and is replaced for the next.
#[tokio::test]
async fn a_held_connection_that_died_is_replaced() {
    let (_, _, pool) = fresh_database().await;
    let reads = Reads::batcher(&pool);
    let table = new_table(&pool).await;
    let kill_readers = || async {
        let killed: Vec<bool> = sqlx::query_scalar(
            "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid()
               AND query LIKE '%= ANY($1::uuid[])%'
               AND query NOT LIKE '%pg_terminate_backend%'",
        )
        .fetch_all(&pool)
        .await
        .unwrap();
        assert_eq!(killed, [true], "the reader's one connection");
    };
    assert_eq!(
        versions::stored_version(&reads, table).await.unwrap(),
        Some(0)
    );
    kill_readers().await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(
        versions::stored_version(&reads, table).await.unwrap(),
        Some(0)
    );

    kill_readers().await;
    let lost = versions::stored_version(&reads, table)
        .await
        .map_err(ApiError::from);
    assert!(
        matches!(lost, Err(ApiError::ServiceUnavailable(_))),
        "{lost:?}"
    );
    assert_eq!(
        versions::stored_version(&reads, table).await.unwrap(),
        Some(0)
    );
}

/// An account's feed is written one transaction at a time: a statement that
/// writes an item to a feed takes the account's feed lock before it draws
/// the item's id, so a second one (here, a move at another table of the
/// same player) waits until the first commits, and the feed's ids are in
/// commit order (a reader who has seen item n never later finds one below n).
#[tokio::test]
async fn a_feeds_items_wait_for_the_transaction_that_holds_its_accounts_feed_lock() {
    use domain::{Due, Notice, NoticeKind};
    let (_, _, pool) = fresh_database().await;
    let player = store::accounts::insert(&pool, "feedlock", "$argon2id$x", Role::Player)
        .await
        .unwrap()
        .id;
    let (first_table, second_table) = (new_table(&pool).await, new_table(&pool).await);
    let a_move = |table| {
        ChainedAppend::new(table, 0, GENESIS_PREV_HASH, batch(&["a"]), None).with_notices(
            vec![Notice {
                kind: NoticeKind::YourTurn,
                player: player.to_string().into(),
            }],
            Due::Keep,
        )
    };
    let mut first = pool.begin().await.unwrap();
    events::insert_one(&mut first, &a_move(first_table), store::feed::Outbox::OFF)
        .await
        .unwrap();
    let second = tokio::spawn({
        let (pool, chained) = (pool.clone(), a_move(second_table));
        async move {
            let mut conn = pool.acquire().await.unwrap();
            events::insert_one(&mut conn, &chained, store::feed::Outbox::OFF).await
        }
    });
    let waiting = e2e::eventually(Duration::from_secs(10), || async {
        let n: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity
             WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'
               AND datname = current_database()",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        (n == 1).then_some(())
    })
    .await;
    assert!(waiting.is_some(), "the second move waits on the feed lock");
    assert!(!second.is_finished());
    assert!(store::feed::after(&pool, player, 0, 10)
        .await
        .unwrap()
        .is_empty());

    first.commit().await.unwrap();
    second.await.unwrap().unwrap();
    let items = store::feed::after(&pool, player, 0, 10).await.unwrap();
    let tables: Vec<Uuid> = items.iter().map(|i| i.table_id).collect();
    assert_eq!(tables, [first_table, second_table], "ids in commit order");
}
