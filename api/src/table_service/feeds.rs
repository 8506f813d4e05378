//! The feeds' side of the tables: the turns' alarms ring (docs/API.md
//! "Finding a game and coming back"), and their feeds wake in every
//! process (the feed items a table's events write wake theirs with the
//! commit, `crate::log::Log::committed`).

use super::TableService;
use store::{self, StoreError};

impl TableService {
    /// Rings the turns' alarms that are due (at most `limit`), each once
    /// whichever process gets there first: `turn_ending` items for their
    /// players, whose feeds wake. How many rang.
    pub async fn ring_turn_endings(&self, limit: i64) -> Result<usize, StoreError> {
        let outbox = self.log.outbox();
        let told = store::feed::ring_turn_endings(&self.pool, limit, outbox).await?;
        let rung = told.len();
        self.log.fed(told);
        Ok(rung)
    }
}
