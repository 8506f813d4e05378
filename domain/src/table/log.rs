//! One way to read a table's log: a stored event is read through its
//! format version ([`TableEvent::read`], where an upcaster goes when an
//! event's shape changes), and the events are folded one at a time, in seq
//! order, by [`Fold`] (the cache's cold load and catch-up, the history, the
//! replays and the audit all fold this way).

use std::panic::AssertUnwindSafe;

use super::{Table, TableEvent};
use crate::event::EVENT_VERSION;

/// Why a stored event cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("event format {0} is newer than this server's ({EVENT_VERSION})")]
    Version(u32),
    #[error("{0}")]
    Data(#[from] serde_json::Error),
}

impl TableEvent {
    /// Rebuilds a stored event of format `v` from its `type` and its data
    /// as JSON text. Formats 1 to 3 have one shape (2 adds the salt, which
    /// the engine does not read; 3 drops the seated persons' names, which
    /// it no longer reads); a later format that changes a shape
    /// brings older data to it here, before parsing.
    pub fn read(kind: &str, v: u32, data: &str) -> Result<TableEvent, ReadError> {
        match v {
            1..=EVENT_VERSION => Ok(TableEvent::parse(kind, data)?),
            _ => Err(ReadError::Version(v)),
        }
    }
}

/// Why a log does not fold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FoldError {
    #[error("seq {seq} where {expected} was due")]
    OutOfOrder { seq: u64, expected: u64 },
    #[error("the log begins with {0}, not table_created")]
    NotCreated(&'static str),
    #[error("the engine cannot apply this event")]
    Unappliable,
}

/// Applies the event at `seq` to `table`, which must be at `seq - 1`.
/// `evolve` trusts the facts it is given (the engine wrote them): a log
/// that may be corrupt goes through [`apply_guarded`].
pub fn apply(table: &mut Table, seq: u64, event: &TableEvent) -> Result<(), FoldError> {
    if seq != table.version + 1 {
        return Err(FoldError::OutOfOrder {
            seq,
            expected: table.version + 1,
        });
    }
    table.evolve(event);
    Ok(())
}

/// [`apply`] for a log that may be corrupt (the audit, replays): an event
/// the engine cannot apply (its `evolve` assumes facts the engine wrote
/// itself, e.g. seats in range) is an error, not a crash.
pub fn apply_guarded(table: &mut Table, seq: u64, event: &TableEvent) -> Result<(), FoldError> {
    std::panic::catch_unwind(AssertUnwindSafe(|| apply(table, seq, event)))
        .unwrap_or(Err(FoldError::Unappliable))
}

/// A table folded from its log, event after event.
#[derive(Debug, Clone, Default)]
pub struct Fold {
    table: Option<Table>,
}

impl Fold {
    pub fn new() -> Self {
        Self::default()
    }

    /// Folds the event at `seq` (the first must be seq 1, `table_created`).
    pub fn apply(&mut self, seq: u64, event: &TableEvent) -> Result<(), FoldError> {
        match &mut self.table {
            Some(table) => apply(table, seq, event),
            None if seq != 1 => Err(FoldError::OutOfOrder { seq, expected: 1 }),
            None => {
                self.table =
                    Some(Table::from_events([event]).ok_or(FoldError::NotCreated(event.kind()))?);
                Ok(())
            }
        }
    }

    /// The table so far (`None` before the first event).
    pub fn table(&self) -> Option<&Table> {
        self.table.as_ref()
    }

    pub fn into_table(self) -> Option<Table> {
        self.table
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn created() -> Vec<TableEvent> {
        Table::create("classique", &serde_json::Map::new(), 4, None, &"a".into()).unwrap()
    }

    /// A replay parses and moves every event of a log: the large, rare ones
    /// (`table_created`, `result_corrected`) are boxed so that the common
    /// ones are not moved at their size (376 bytes before, 64 now).
    #[test]
    fn an_event_is_small_to_move() {
        assert!(std::mem::size_of::<TableEvent>() <= 64);
        assert!(std::mem::size_of::<crate::Event>() <= 64);
    }

    #[test]
    fn a_log_folds_in_seq_order_from_table_created() {
        let events = created();
        let mut fold = Fold::new();
        for (i, e) in events.iter().enumerate() {
            fold.apply(i as u64 + 1, e).unwrap();
        }
        assert_eq!(fold.table(), Table::from_events(&events).as_ref());
        assert_eq!(
            fold.apply(5, &events[1]),
            Err(FoldError::OutOfOrder {
                seq: 5,
                expected: 3
            })
        );
    }

    #[test]
    fn a_log_must_begin_with_table_created_at_seq_1() {
        let events = created();
        assert_eq!(
            Fold::new().apply(1, &events[1]),
            Err(FoldError::NotCreated("player_joined"))
        );
        assert_eq!(
            Fold::new().apply(2, &events[0]),
            Err(FoldError::OutOfOrder {
                seq: 2,
                expected: 1
            })
        );
    }

    #[test]
    fn events_of_a_format_newer_than_the_engine_are_refused() {
        let data = r#"{"seat":1,"salt":"00000000000000000000000000000000"}"#;
        assert!(TableEvent::read("player_left", EVENT_VERSION, data).is_ok());
        assert!(TableEvent::read("player_left", 1, data).is_ok());
        assert!(matches!(
            TableEvent::read("player_left", EVENT_VERSION + 1, data),
            Err(ReadError::Version(_))
        ));
    }
}
