//! What brings every process's view of a table up to date once a move is
//! committed (the log itself, and its announcement: [`crate::log`]):
//!
//! - `batcher`: the shared shape of the log's writer, its announcer and the
//!   version reads: a task that takes every request queued while its last
//!   statement ran, and answers each;
//! - `notify`: the [`notify::CommitHub`], one per process: its `LISTEN`
//!   connection hears every announcement, notes the table's version (so
//!   that its cache knows whether to read the log) and wakes the table's
//!   waiters;
//! - `versions`: batched reads of tables' stored versions, so that a view
//!   is never older than the last commit of any process.

pub mod batcher;
pub mod notify;
pub mod versions;
