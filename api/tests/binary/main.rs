//! The tests of the `huit` binary and of its committed OpenAPI document:
//! the CLI against a real database, and the document's drift. One test
//! binary.

/// The games the end-to-end tests generate (the `e2e` crate's, which
/// depends on this one): only part of it is used here.
#[path = "../../../tests/src/games.rs"]
#[allow(dead_code)]
mod games;
mod support;

mod cli;
mod history_cli;
mod log_cli;
mod openapi;
