//! How a committed move reaches everyone: the machinery between the table
//! service's decision and the long polls and streams of every process.
//!
//! ```text
//! handler (routes::tables::play::post_move)
//!   → TableService::act (table_service): lock the table, refresh it, check
//!     the client's version, Table::execute (the engine decides and folds)
//!   → LogWriter (log_writer): plain moves of every table queued meanwhile
//!     go into ONE statement (store::events::append_batch) on a held
//!     connection (store::held); lobby events and idempotent answers take
//!     a transaction of their own instead
//!   → announce (versions::Announcer): the new versions of the tables
//!     committed meanwhile, in one NOTIFY 'table_events' of its own
//!   → CommitHub (notify): each process's LISTEN connection hears it, notes
//!     the version (so its cache knows whether to read the log) and wakes
//!     the table's waiters
//!   → long polls and streams (table_service::reads, sse) read the new
//!     events from the cache's tail, redacted for their caller
//! ```
//!
//! - `batcher`: the shared shape of the three: a task that takes every
//!   request queued while its last statement ran, and answers each;
//! - `log_writer`: batched appends;
//! - `versions`: batched reads of tables' stored versions, and batched
//!   announcements;
//! - `notify`: the [`notify::CommitHub`], one per process.

pub mod batcher;
pub mod log_writer;
pub mod notify;
pub mod versions;
