//! The feeds' side of the tables: committed feed items wake their
//! accounts' long polls and streams in every process, and the turns'
//! alarms ring (docs/API.md "Finding a game and coming back").

use uuid::Uuid;

use super::TableService;
use store::{self, StoreError};

impl TableService {
    /// Committed feed items: the feeds of their accounts wake, here and in
    /// every process.
    pub(super) fn fed(&self, notices: &[domain::Notice]) {
        let accounts = notices
            .iter()
            .filter_map(|n| n.player.as_str().parse().ok());
        self.wake_feeds(accounts);
    }

    fn wake_feeds(&self, accounts: impl IntoIterator<Item = Uuid>) {
        for account in accounts {
            self.hub.fed(account);
            self.log.announce_feed(account);
        }
    }

    /// Rings the turns' alarms that are due (at most `limit`), each once
    /// whichever process gets there first: `turn_ending` items for their
    /// players, whose feeds wake. How many rang.
    pub async fn ring_turn_endings(&self, limit: i64) -> Result<usize, StoreError> {
        let outbox = self.log.outbox() == store::events::Outbox::On;
        let told = store::feed::ring_turn_endings(&self.pool, limit, outbox).await?;
        let rung = told.len();
        self.wake_feeds(told);
        Ok(rung)
    }
}
