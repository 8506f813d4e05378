//! Fair deals (docs/API.md "Fair deals"): every shuffle of a game takes its
//! order from HMAC-SHA256 keyed with the table's server seed, over the
//! table, the seats' client seeds, the round and the shuffle's number, in
//! counter mode, drawn by rejection sampling into a Fisher–Yates shuffle.
//! The server logs the seed's SHA-256 when the table is created and the
//! seed itself when the game is over: anyone can then recompute every deal
//! and reshuffle from the log.
//!
//! The engine asks a [`Chance`] for each shuffle's [`ShuffleStream`]: the
//! server's is [`Fair`]; any random number generator is one too (a stream
//! keyed with bytes drawn from it), for simulations, arenas and tests that
//! prove nothing.

use std::fmt;

use hmac::{Hmac, Mac};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// What every shuffle's message starts with (the algorithm's version).
pub const SHUFFLE_VERSION: &str = "huit-shuffle-v1";

/// A table's secret: 32 random bytes, known to the server alone until the
/// game is over (then logged as 64 lowercase hex digits). Its `Debug` shows
/// nothing of it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(value_type = String, pattern = "^[0-9a-f]{64}$"))]
#[serde(try_from = "String", into = "String")]
pub struct ServerSeed([u8; 32]);

impl ServerSeed {
    /// A fresh seed from `rng` (the server passes a CSPRNG).
    pub fn draw<R: Rng + ?Sized>(rng: &mut R) -> ServerSeed {
        ServerSeed(rng.gen())
    }

    pub fn from_bytes(bytes: [u8; 32]) -> ServerSeed {
        ServerSeed(bytes)
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// 64 lowercase hex digits: how the revealed seed is logged.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// A seed as logged (64 lowercase hex digits), else `None`.
    pub fn from_hex(text: &str) -> Option<ServerSeed> {
        if text.len() != 64
            || text
                .bytes()
                .any(|b| !matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        {
            return None;
        }
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(text, &mut bytes).ok()?;
        Some(ServerSeed(bytes))
    }

    /// The commitment logged when the table is created: the SHA-256 of the
    /// seed's bytes.
    pub fn hash(&self) -> SeedHash {
        SeedHash(Sha256::digest(self.0).into())
    }
}

impl TryFrom<String> for ServerSeed {
    type Error = SeedTextError;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        ServerSeed::from_hex(&text).ok_or(SeedTextError)
    }
}

impl From<ServerSeed> for String {
    fn from(seed: ServerSeed) -> String {
        seed.to_hex()
    }
}

/// Why a logged seed or seed hash does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a server seed and its hash are logged as 64 lowercase hex digits")]
pub struct SeedTextError;

/// The commitment to a table's server seed: its SHA-256, logged (64
/// lowercase hex digits) when the table is created. It tells nothing of the
/// seed, which is 32 random bytes.
#[derive(Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(value_type = String, pattern = "^[0-9a-f]{64}$"))]
#[serde(try_from = "String", into = "String")]
pub struct SeedHash([u8; 32]);

impl SeedHash {
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// Whether `seed` is the one committed to.
    pub fn commits_to(&self, seed: &ServerSeed) -> bool {
        seed.hash() == *self
    }
}

impl fmt::Debug for SeedHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SeedHash({})", self.to_hex())
    }
}

impl TryFrom<String> for SeedHash {
    type Error = SeedTextError;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        // The same 64 lowercase hex digits as a seed.
        ServerSeed::from_hex(&text)
            .map(|bytes| SeedHash(bytes.0))
            .ok_or(SeedTextError)
    }
}

impl From<SeedHash> for String {
    fn from(hash: SeedHash) -> String {
        hash.to_hex()
    }
}

impl fmt::Debug for ServerSeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ServerSeed(hidden)")
    }
}

/// Why a client seed is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a client seed is 1 to 64 printable ASCII characters, from '!' to '~'")]
pub struct ClientSeedError;

/// A seat's own contribution to every shuffle: 1 to 64 ASCII characters
/// from `!` to `~` (no spaces, nothing a message could confuse with its
/// separators).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(value_type = String, pattern = "^[!-~]{1,64}$", example = "d4f1c7e2a9b05e38"))]
#[serde(try_from = "String", into = "String")]
pub struct ClientSeed(String);

impl ClientSeed {
    pub const MAX_LEN: usize = 64;

    pub fn new(text: impl Into<String>) -> Result<ClientSeed, ClientSeedError> {
        let text = text.into();
        let printable = text.bytes().all(|b| (b'!'..=b'~').contains(&b));
        if text.is_empty() || text.len() > Self::MAX_LEN || !printable {
            return Err(ClientSeedError);
        }
        Ok(ClientSeed(text))
    }

    /// A seed the server draws for a seat that brought none: 32 hex digits.
    pub fn draw<R: Rng + ?Sized>(rng: &mut R) -> ClientSeed {
        ClientSeed(hex::encode(rng.gen::<[u8; 16]>()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ClientSeed {
    type Error = ClientSeedError;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        ClientSeed::new(text)
    }
}

impl From<ClientSeed> for String {
    fn from(seed: ClientSeed) -> String {
        seed.0
    }
}

/// The words of one shuffle: HMAC-SHA256 blocks `i = 0, 1, 2, …` of the
/// shuffle's message, each read as eight 32-bit big-endian words in order.
#[derive(Clone)]
pub struct ShuffleStream {
    /// Keyed, and fed the message up to the block counter.
    prefix: Hmac<Sha256>,
    counter: u64,
    block: [u32; 8],
    next: usize,
}

impl ShuffleStream {
    /// The stream of shuffle `shuffle` (0 the deal, then each reshuffle) of
    /// round `round` (from 1; round 0, shuffle 0 draws the first dealer).
    pub fn new(
        key: &[u8],
        table: &str,
        clients: &[ClientSeed],
        round: u32,
        shuffle: u32,
    ) -> ShuffleStream {
        let mut prefix = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes any key");
        prefix.update(SHUFFLE_VERSION.as_bytes());
        prefix.update(b"\0");
        prefix.update(table.as_bytes());
        prefix.update(b"\0");
        for client in clients {
            prefix.update(client.as_str().as_bytes());
            prefix.update(b"\0");
        }
        prefix.update(round.to_string().as_bytes());
        prefix.update(b"\0");
        prefix.update(shuffle.to_string().as_bytes());
        prefix.update(b"\0");
        ShuffleStream {
            prefix,
            counter: 0,
            block: [0; 8],
            next: 8,
        }
    }
}

/// A source of 32-bit words, and what a shuffle draws from it: the
/// contract's numbers below a bound and its Fisher–Yates, written once for
/// every stream.
pub trait Words {
    fn word(&mut self) -> u32;

    /// A number below `bound` (from 1 to 2^32): words are taken until one
    /// is below the largest multiple of `bound` that fits in 32 bits, and
    /// reduced modulo `bound`.
    fn below(&mut self, bound: usize) -> usize {
        draw_below(bound, || self.word())
    }

    /// Fisher–Yates: for `i` from the last index down to 1, swaps `a[i]`
    /// with `a[j]`, `j` a draw below `i + 1`.
    fn shuffle<T>(&mut self, a: &mut [T]) {
        for i in (1..a.len()).rev() {
            let j = self.below(i + 1);
            a.swap(i, j);
        }
    }
}

impl Words for ShuffleStream {
    fn word(&mut self) -> u32 {
        if self.next == 8 {
            let mut mac = self.prefix.clone();
            mac.update(self.counter.to_string().as_bytes());
            let bytes = mac.finalize().into_bytes();
            for (word, chunk) in self.block.iter_mut().zip(bytes.chunks_exact(4)) {
                *word = u32::from_be_bytes(chunk.try_into().expect("four bytes"));
            }
            self.counter += 1;
            self.next = 0;
        }
        self.next += 1;
        self.block[self.next - 1]
    }
}

/// The words of a generator seeded from another: the shuffles of games
/// nobody will verify (simulations, a bot's imagined playouts, tests).
#[derive(Debug, Clone)]
pub struct RngWords(ChaCha8Rng);

impl Words for RngWords {
    fn word(&mut self) -> u32 {
        self.0.next_u32()
    }
}

impl fmt::Debug for ShuffleStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShuffleStream")
            .field("block", &self.counter)
            .finish_non_exhaustive()
    }
}

/// A number below `bound` (from 1 to 2^32) from `words`: words are taken
/// until one is below the largest multiple of `bound` that fits in 32 bits,
/// and reduced modulo `bound`, so that every number is as likely.
fn draw_below(bound: usize, mut words: impl FnMut() -> u32) -> usize {
    let bound = u64::try_from(bound)
        .ok()
        .filter(|b| (1..=1 << 32).contains(b))
        .expect("a bound from 1 to 2^32");
    let limit = (1u64 << 32) - (1u64 << 32) % bound;
    loop {
        let x = u64::from(words());
        if x < limit {
            return (x % bound) as usize;
        }
    }
}

/// Where the engine's shuffles come from.
pub trait Chance {
    type Stream: Words;

    /// The stream of shuffle `shuffle` of round `round`, for a game whose
    /// seats brought `clients` (in seat order).
    fn stream(&mut self, clients: &[ClientSeed], round: u32, shuffle: u32) -> Self::Stream;

    /// The server seed the streams are keyed with, revealed by the table
    /// once its game is over; `None` for streams that prove nothing.
    fn server_seed(&self) -> Option<&ServerSeed> {
        None
    }
}

/// The contract's shuffles: keyed with the table's server seed.
#[derive(Debug, Clone, Copy)]
pub struct Fair<'a> {
    pub seed: &'a ServerSeed,
    /// The table's id as lowercase hyphenated UUID text.
    pub table: &'a str,
}

impl Chance for Fair<'_> {
    type Stream = ShuffleStream;

    fn stream(&mut self, clients: &[ClientSeed], round: u32, shuffle: u32) -> ShuffleStream {
        ShuffleStream::new(self.seed.as_bytes(), self.table, clients, round, shuffle)
    }

    fn server_seed(&self) -> Option<&ServerSeed> {
        Some(self.seed)
    }
}

/// Any random number generator: each stream a generator seeded from it, so
/// seeded runs stay reproducible. Nothing is proven, and nothing is paid
/// for a proof (an HMAC stream costs about three times `rand`'s shuffle:
/// BENCHMARKS.md, twenty-ninth pass).
impl<R: Rng + ?Sized> Chance for R {
    type Stream = RngWords;

    fn stream(&mut self, _: &[ClientSeed], _: u32, _: u32) -> RngWords {
        RngWords(ChaCha8Rng::from_seed(self.gen()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vector() -> (ServerSeed, &'static str, Vec<ClientSeed>) {
        let mut bytes = [0u8; 32];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = i as u8;
        }
        let clients = ["alice-seed", "bob-seed"].map(|c| ClientSeed::new(c).unwrap());
        (
            ServerSeed::from_bytes(bytes),
            "00000000-0000-4000-8000-000000000000",
            clients.to_vec(),
        )
    }

    fn shuffled(n: usize, round: u32, shuffle: u32) -> Vec<usize> {
        let (seed, table, clients) = vector();
        let mut a: Vec<usize> = (0..n).collect();
        Fair { seed: &seed, table }
            .stream(&clients, round, shuffle)
            .shuffle(&mut a);
        a
    }

    /// The contract's test vector (docs/API.md "Fair deals").
    #[test]
    fn the_contracts_test_vector() {
        let (seed, _, _) = vector();
        assert_eq!(
            seed.hash().to_hex(),
            "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
        );
        // Logged as text, both read back; anything else is refused.
        let logged = serde_json::to_value(&seed).unwrap();
        assert_eq!(serde_json::from_value::<ServerSeed>(logged).unwrap(), seed);
        let hash = serde_json::to_value(seed.hash()).unwrap();
        let hash: SeedHash = serde_json::from_value(hash).unwrap();
        assert!(hash.commits_to(&seed));
        assert!(!hash.commits_to(&ServerSeed::from_bytes([7; 32])));
        let upper = "630DCD2966C4336691125448BBB25B4FF412A49C732DB2C8ABC1B8581BD710DD";
        assert!(serde_json::from_value::<SeedHash>(upper.into()).is_err());
        assert_eq!(
            shuffled(52, 1, 0),
            [
                43, 19, 37, 4, 18, 24, 13, 31, 10, 14, 48, 12, 34, 46, 21, 17, 26, 25, 2, 27, 20,
                7, 1, 11, 30, 39, 33, 49, 9, 36, 23, 0, 40, 32, 38, 41, 50, 6, 35, 5, 44, 28, 51,
                15, 45, 22, 8, 16, 47, 3, 29, 42
            ]
        );
        assert_eq!(shuffled(10, 1, 1), [3, 9, 5, 0, 7, 4, 6, 8, 2, 1]);
        assert_eq!(
            shuffled(52, 2, 0)[..10],
            [7, 29, 11, 15, 2, 38, 17, 36, 13, 21]
        );
    }

    #[test]
    fn a_seats_own_seed_changes_every_shuffle() {
        let (seed, table, mut clients) = vector();
        let before = shuffled(52, 1, 0);
        clients[1] = ClientSeed::new("bob-other-seed").unwrap();
        let mut a: Vec<usize> = (0..52).collect();
        Fair { seed: &seed, table }
            .stream(&clients, 1, 0)
            .shuffle(&mut a);
        assert_ne!(a, before);
    }

    #[test]
    fn a_draw_below_rejects_the_words_past_the_last_whole_multiple() {
        // 2^32 mod 3 = 1: the word 2^32 - 1 would make 0 likelier than 1
        // and 2, so it is refused and the next word is read.
        let mut words = [u32::MAX, u32::MAX - 1, 5].into_iter();
        assert_eq!(
            draw_below(3, || words.next().unwrap()),
            (u32::MAX - 1) as usize % 3
        );
        let mut words = [u32::MAX, 5].into_iter();
        assert_eq!(draw_below(3, || words.next().unwrap()), 2);
        // A power of two refuses nothing.
        let mut words = [u32::MAX].into_iter();
        assert_eq!(draw_below(4, || words.next().unwrap()), 3);
        let mut words = [7].into_iter();
        assert_eq!(draw_below(1, || words.next().unwrap()), 0);
    }

    #[test]
    fn client_seeds_are_one_to_64_printable_ascii_characters() {
        for good in ["a", "alice-seed", "~!{}", &"x".repeat(64)] {
            assert!(ClientSeed::new(good).is_ok(), "{good}");
        }
        for bad in ["", " ", "a b", "é", "tab\t", &"x".repeat(65)] {
            assert_eq!(ClientSeed::new(bad), Err(ClientSeedError), "{bad:?}");
        }
        let parsed: Result<ClientSeed, _> = serde_json::from_str("\"a b\"");
        assert!(parsed.is_err());
    }

    #[test]
    fn a_server_seed_reads_back_from_its_hex_and_never_shows_in_debug() {
        let (seed, _, _) = vector();
        assert_eq!(ServerSeed::from_hex(&seed.to_hex()), Some(seed.clone()));
        assert_eq!(ServerSeed::from_hex(&seed.to_hex().to_uppercase()), None);
        assert_eq!(ServerSeed::from_hex("00"), None);
        assert!(!format!("{seed:?}").contains("00010203"));
    }
}
