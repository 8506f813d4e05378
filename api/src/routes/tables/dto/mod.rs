//! The documents of the table routes: what a client sends and gets, one
//! module a kind:
//! - `opening`: the rule sets, and what opens or fills a table (a new
//!   table, quick play, a bot);
//! - `summary`: a table's summary and its entry in a list;
//! - `play`: the caller's view, moves and their answers, the event pages.

mod opening;
mod play;
mod summary;

pub use opening::{BotRequest, NewTable, QuickPlay, RulesetDto, SeatRequest, MAX_BOTS_AFTER};
pub use play::{EventPage, EventsQuery, MoveAnswer, MoveRequest, TableView, ViewPlayer, ViewQuery};
pub use summary::{
    table_summary_example, ClockDto, Holder, ListedPlayer, ListedTableDto, SeatPresence,
    SummaryPlayer, TableHead, TablePage, TableSummary,
};

use serde_json::Value;

/// The rules of `classique`, for the examples.
fn classique_rules() -> Value {
    serde_json::to_value(domain::Preset::Classique.rules()).expect("rules serialise")
}
