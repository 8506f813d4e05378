//! Tables: the lobby (the rule sets, opening, listing, joining, leaving and
//! starting a table) and play (the caller's view, moves and the event
//! feed). Handlers authenticate, parse (the headers as extractors, see
//! `headers`), make one call to [`crate::table_service::TableService`],
//! which loads, decides and appends, and shape the answer (`dto`).

pub mod dto;
pub mod headers;
pub mod lobby;
pub mod play;
pub mod presence;
pub mod watching;
