//! A table's public event log, read and checked without a database: its
//! canonical JSON (RFC 8785) and hash chain ([`chain`]). The server writes
//! through it (the crate `store` re-exports it as `store::chain`); a replay
//! tool verifies an exported log with it and folds the events with the
//! crate `domain` (`huit log verify` and `huit log replay` do both).

pub mod chain;
