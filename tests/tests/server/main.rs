//! The end-to-end tests of the Huit API over HTTP, against a real
//! PostgreSQL: one test binary (each module used to be a binary of its own,
//! each linking the whole server). Every test starts its own app on a fresh
//! database; the tests that need a process of their own (faults, open-file
//! limits, metrics, whose recorder is one per process) run `huit serve` as
//! a child process (`support::process`).

mod support;

mod accounts;
mod challenge;
mod client_limits;
mod concurrency;
mod corrections;
mod deploying;
mod descriptors;
mod devices;
mod disputes;
mod erasure;
mod events;
mod fair_deals;
mod fair_play;
mod faults;
mod feed;
mod finding_a_game;
mod games;
mod hidden_cards;
mod history;
mod http;
mod keeping_tables_moving;
mod metrics;
mod my_account;
mod push;
mod ratings;
mod sanctions;
mod tables;
mod webhooks;
