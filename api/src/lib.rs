//! The HTTP API of Huit.
//!
//! # The path of a move
//!
//! 1. **Handler**: [`routes::tables::play::post_move`] authenticates the
//!    caller ([`auth`]), reads the body and `If-Match`
//!    ([`routes::tables::dto`], [`routes::tables::headers`]) and calls
//!    [`TableService::act`](table_service::TableService::act).
//! 2. **The table, current**: `act` locks the table's slot in the cache and
//!    brings it up to date (nothing is read when the [`log::hub`] hub
//!    heard of no newer commit), then checks the client's version.
//! 3. **Decide**: `domain::Table::execute` decides the move and folds its
//!    events into the cached table, which an `Uncommitted` guard evicts
//!    unless the write commits; `Table::due_after` says when the table is
//!    next due.
//! 4. **Chain**: [`store::ChainedAppend`] seals each event with its salt,
//!    stamps it and hashes it onto the cached head ([`store::chain`]).
//! 5. **Append**: [`log::Log::append`], batched: the [`log::writer`] puts
//!    every move queued meanwhile into ONE statement
//!    ([`store::events::insert_batch`]: `game_tables`' version, status,
//!    `due_at`, the event rows and the feed items the events cause,
//!    `domain::Table::notices`), committed before the move is answered.
//! 6. **Publish**: the cache's tail takes the stored events, the hub wakes
//!    this process's waiters, and [`log::announce`] tells every process
//!    (`NOTIFY table_events`, in a transaction of its own).
//! 7. **Wake**: each process's hub hears it and wakes the table's
//!    subscribers; a long poll or a stream
//!    ([`TableService::wait_for`](table_service::TableService::wait_for),
//!    [`sse`]) reads the new events from the cache's tail, redacted for its
//!    caller (`domain::redaction`), and answers.
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
//! 4. **Append, publish, wake**: steps 4 to 7 of a move. A table that moved
//!    on meanwhile is at another version: nothing is written.
//!
//! # Modules
//!
//! | module | what it owns |
//! |---|---|
//! | [`routes`] | thin actix-web handlers, each documented for OpenAPI: authenticate, parse, one service call, answer |
//! | [`auth`], [`throttle`], [`rates`], [`watchers`] | who is calling, and how much they may ask: bearer tokens, failed log-ins and invitation guesses, creation rates, open streams |
//! | [`table_service`] | tables: the per-process cache of folded tables, commands (the write path), reads, the one loop of long polls and streams, and finding a game (quick play, invitations, rematches) |
//! | [`log`] | a table's log: its records, its hash chain, the one append (batched, or in the caller's transaction) and the announcement of commits |
//! | [`pruned`] | the maps of shared state that drop unneeded entries in one pass once they doubled (cached tables, wake-up counters, versions read lately) |
//! | [`deadlines`] | what the server does on a table by itself: timeouts, away, resigned and bot seats' moves, and their metrics |
//! | [`searches`] | the budget of bot searches: how many at once, and how much each may search under pressure |
//! | [`disputes`] | filing, opening and resolving disputes |
//! | [`feed`], [`webhooks`] | a player's feed (written with the events that cause its items), its long poll and stream, and its webhooks: signed, delivered from the outbox by any process, retried |
//! | [`ratings`] | ratings and statistics: a game rated in the transaction that appends its end, in its ruleset's order; `huit ratings rebuild`, from the logs alone |
//! | [`invites`] | private tables' invitation codes: made, read as spoken, looked up by digest, compared in constant time |
//! | [`sse`] | the server-sent event streams |
//! | [`history`] | round histories, replays and audits, from the log alone |
//! | [`store`] | every SQL statement of the service, and its own error ([`store::StoreError`]) |
//! | [`error`] | [`error::ApiError`], answered as RFC 9457 `application/problem+json`; the one mapping of the store's errors to HTTP |
//! | [`metric_names`] | the name of every metric, in a leaf that imports nothing of the server: recorders name theirs from here |
//! | [`config`], [`startup`], [`telemetry`], [`metrics`], [`openapi`], [`password`], [`console`] | settings, the server's assembly, logs, the metrics' exporter (`/metrics`), the OpenAPI document, argon2id, the admin console |

pub mod auth;
pub mod codes;
pub mod config;
pub mod console;
pub mod deadlines;
pub mod disputes;
pub mod error;
pub mod feed;
pub mod history;
pub mod invites;
pub mod log;
pub mod metric_names;
pub mod metrics;
pub mod openapi;
pub mod password;
pub mod pruned;
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
