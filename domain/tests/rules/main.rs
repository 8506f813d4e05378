//! The engine's integration tests, one binary: every rule and decision of
//! docs/RULES.md by name (`rules_*`), counted outcomes (`perft`), and
//! random games, tables and commands that keep the invariants.

mod support;

mod arbitrary_commands;
mod perft;
mod random_games;
mod random_tables;
mod rules_announce;
mod rules_effects;
mod rules_flow;
mod rules_letters;
mod rules_presets;
mod rules_scoring;
