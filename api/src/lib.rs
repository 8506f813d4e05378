//! The HTTP API of Huit.
//!
//! # Layers
//!
//! The server is four crates, `domain` and `ledger` under `store` under
//! `api` (Cargo holds that order: a dependency cannot depend back), and `api`'s modules
//! form four layers, top to bottom. A module imports modules of its own
//! layer or of the layers below it, never one above; no two modules import
//! each other, directly or around a loop; below HTTP nothing names
//! actix-web; no SQL is written here (it is the store's).
//! `tests/tests/architecture.rs` reads this table and the sources, and
//! fails otherwise.
//!
//! | layer | modules | what they own | never imports |
//! |---|---|---|---|
//! | **HTTP** | [`startup`], [`routes`], [`sse`], [`auth`], [`watchers`], [`throttle`], [`password`], [`error`], [`telemetry`], [`metrics`], [`openapi`], [`console`] | the server's assembly; thin actix-web handlers, each documented for OpenAPI (authenticate, parse, one service call, answer); the server-sent event streams; who is calling and how much they may ask (bearer tokens, open streams, failed log-ins and invitation guesses); argon2id on the blocking pool; [`error::ApiError`], the one mapping of the services' and the store's errors to RFC 9457 problems; logs; the `/metrics` exporter (each owner sets its gauges, start-up hands the list in); the OpenAPI document; the admin console | nothing above it: the top |
//! | **service** | [`table_service`], [`dealer`], [`deadlines`], [`searches`], [`feed`], [`webhooks`], [`push`], [`history`], [`disputes`], [`ratings`], [`rates`], [`invites`], [`accounts`], [`service_error`], [`codes`] | tables (the per-process cache of folded tables and their persons' names, commands, reads, the one loop of long polls and streams, finding a game); who shuffles a table's cards (its secret server seed, docs/API.md "Fair deals"); what the server does on a table by itself (timeouts, away, resigned and bot seats); the bots' search budget; a player's feed, its webhooks (signed, from the outbox, retried) and its pushes to phones (APNs, FCM, from the outbox too, unless the player follows); round histories, replays and audits from the log alone; disputes; ratings, rated in the transaction that appends a game's end; creation rates; invitation codes; deleting and erasing accounts (and the eraser); [`service_error::ServiceError`], how a service says no, and the problem codes both layers name | HTTP: a service answers a `ServiceError` (the deadlines and quick play decide on those), never an HTTP error or status |
//! | **log** | [`log`] | a table's log as the server writes and hears it: the one append (batched, or in the caller's transaction), the one call once it committed ([`log::Log::committed`]), the announcement to every process and each process's hub that hears it, batched version reads | the services, HTTP |
//! | **leaves** | [`config`], [`metric_names`], [`pruned`], [`outbound`] | settings; the name of every metric; the maps of shared state that drop unneeded entries once they doubled; the one builder of the clients the server calls others with (rustls, the platform's roots and `HUIT_EXTRA_CA_FILE`) | anything of the server |
//!
//! Beneath them, the crate `store`: every SQL statement, the log's records,
//! the migrations, and its own error ([`store::StoreError`]); it imports
//! nothing of the server and keeps no cache. Beneath everything, the crate
//! `domain`: the rules, the events, the views and their redaction, the
//! bots, the ratings' arithmetic; no I/O, no clock; and beside it the crate
//! `ledger`: the log's canonical JSON (RFC 8785) and hash chain, with no
//! database, for replay tools too.
//!
//! # The path of a move
//!
//! From `POST /v1/tables/{id}/moves` to another process's SSE frame:
//!
//! 1. **Handler** (`routes/tables/play.rs`): [`routes::tables::play::post_move`]
//!    authenticates the caller ([`auth`]), reads the body and `If-Match`
//!    and calls [`TableService::act`](table_service::TableService::act).
//! 2. **The table, current** (`table_service/commands.rs`, `cache.rs`):
//!    `act` locks the table's slot in the cache and brings it up to date
//!    (nothing is read when the [`log::hub`] heard of no newer commit),
//!    then checks the client's version.
//! 3. **Decide** (`domain`, shuffling by the table's [`dealer`]):
//!    `Table::execute` decides the move and folds
//!    its events into the cached table, which an `Uncommitted` guard evicts
//!    unless the write commits; `Table::notices` says whose feeds hear of
//!    it, `Table::due_after` when the table is next due.
//! 4. **Chain** (`store/src/records.rs`, `chain.rs`):
//!    [`store::ChainedAppend`] seals each event with its salt, stamps it and
//!    hashes it onto the cached head.
//! 5. **Append** (`log/mod.rs`, `log/writer.rs`): [`log::Log::append`],
//!    batched: the writer puts every move queued meanwhile into ONE
//!    statement ([`store::events::insert_batch`]: the table's version,
//!    status and `due_at`, the event rows, the feed items), committed
//!    before the move is answered.
//! 6. **Committed** (`table_service/commands.rs` `publish`, `log/mod.rs`):
//!    the cache's tail takes the stored events, and
//!    [`log::Log::committed`] wakes this process's followers of the table
//!    and of the feeds and tells every process ([`log::announce`]:
//!    `NOTIFY table_events`, in a transaction of its own).
//! 7. **Wake** (`log/hub.rs`, `table_service/reads.rs`, `sse.rs`): each
//!    process's hub hears it and wakes the table's subscribers; a long poll
//!    or a stream ([`TableService::wait_for`](table_service::TableService::wait_for),
//!    [`sse::table_events`]) reads the new events from the cache's tail,
//!    redacted for its caller (`domain::redaction`), and answers.
//!
//! # The path of a deadline's move
//!
//! 1. **Due**: every `HUIT_DUE_POLL_MS`, [`deadlines`] reads the tables due
//!    ([`store::due`]: `game_tables.due_at` passed), each at the version
//!    that made it due.
//! 2. **What to do**: from the cached table, a timeout (D38) or the
//!    server's move for an away, resigned or bot seat (D39, D40, D42).
//! 3. **Decide**: a timeout is `act` at that version; the server's move is
//!    [`TableService::play_for`](table_service::TableService::play_for),
//!    decided on a copy outside the table's lock within the search budget
//!    ([`searches`]), then appended at that version.
//! 4. **Append, commit, wake**: steps 4 to 7 of a move. A table that moved
//!    on meanwhile is at another version ([`service_error::ServiceError::VersionConflict`]):
//!    nothing is written.

pub mod accounts;
pub mod auth;
pub mod codes;
pub mod config;
pub mod console;
pub mod deadlines;
pub mod dealer;
pub mod disputes;
pub mod error;
pub mod feed;
pub mod history;
pub mod invites;
pub mod log;
pub mod metric_names;
pub mod metrics;
pub mod openapi;
pub mod outbound;
pub mod password;
pub mod pruned;
pub mod push;
pub mod rates;
pub mod ratings;
pub mod routes;
pub mod searches;
pub mod service_error;
pub mod sse;
pub mod startup;
pub mod table_service;
pub mod telemetry;
pub mod throttle;
pub mod watchers;
pub mod webhooks;
