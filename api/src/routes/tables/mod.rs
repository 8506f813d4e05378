//! Tables: the lobby (the rule sets, opening, listing and reading tables),
//! the commands without a card (joining, leaving, starting, bots, resigning,
//! aborting, coming back), finding a game (quick play, invitations,
//! rematches) and play (the caller's view, moves and the event
//! feed). Handlers authenticate, parse (the headers as extractors, see
//! `headers`), make one call to [`crate::table_service::TableService`],
//! which loads, decides and appends, and shape the answer (`dto`).

pub mod commands;
pub mod dto;
pub mod finding;
pub mod headers;
pub mod lobby;
pub mod play;
