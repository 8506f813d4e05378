//! Who shuffles a table's cards (docs/API.md "Fair deals"): its secret
//! server seed, drawn when the table opens and kept apart from every read
//! (`store::seeds`), keys every shuffle of its game; the engine reveals it
//! in the log once the game is over. A table opened before fair deals has
//! none, and is shuffled by the thread's generator as it always was.

use domain::{ClientSeed, Fair, SeedHash, ServerSeed, Table, TableCommand, TableError, TableEvent};
use rand::rngs::OsRng;
use uuid::Uuid;

use crate::service_error::ServiceError;

/// A table's server seed, with the table's id as its shuffles name it.
#[derive(Debug, Clone)]
pub(crate) struct Dealer {
    seed: ServerSeed,
    table: String,
}

impl Dealer {
    /// A new table's: a fresh seed from the operating system.
    pub(crate) fn draw(table_id: Uuid) -> Dealer {
        Dealer {
            seed: ServerSeed::draw(&mut OsRng),
            table: table_id.to_string(),
        }
    }

    /// A table's, as stored.
    pub(crate) fn stored(table_id: Uuid, seed: &[u8]) -> Result<Dealer, ServiceError> {
        let bytes = seed
            .try_into()
            .map_err(|_| ServiceError::internal("a stored server seed is not 32 bytes"))?;
        Ok(Dealer {
            seed: ServerSeed::from_bytes(bytes),
            table: table_id.to_string(),
        })
    }

    pub(crate) fn seed_bytes(&self) -> &[u8; 32] {
        self.seed.as_bytes()
    }

    /// What the table's `table_created` commits to.
    pub(crate) fn seed_hash(&self) -> SeedHash {
        self.seed.hash()
    }

    /// The contract's streams, keyed with this seed.
    pub(crate) fn fair(&self) -> Fair<'_> {
        Fair {
            seed: &self.seed,
            table: &self.table,
        }
    }
}

/// `command` executed on `table`, its shuffles by `dealer` (by the thread's
/// generator, a CSPRNG, for a table without one).
pub(crate) fn execute(
    dealer: Option<&Dealer>,
    table: &mut Table,
    command: &TableCommand,
) -> Result<Vec<TableEvent>, TableError> {
    match dealer {
        Some(dealer) => table.execute(command, &mut dealer.fair()),
        None => table.execute(command, &mut rand::thread_rng()),
    }
}

/// A seed the server draws for a seat whose player brought none, or a bot's.
pub(crate) fn client_seed() -> ClientSeed {
    ClientSeed::draw(&mut rand::thread_rng())
}

/// One drawn seed per seat of a table of `seats` (the bots that may take
/// them).
pub(crate) fn client_seeds(seats: usize) -> Vec<ClientSeed> {
    (0..seats).map(|_| client_seed()).collect()
}
