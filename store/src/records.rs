//! The log's records: an event to append ([`NewEvent`], sealed with its
//! salt), a table's new events chained to its log ([`ChainedAppend`],
//! stamped and hashed), and an event as stored ([`StoredEvent`], the public
//! format; [`EventData`], what folding needs).

use chrono::{DateTime, Utc};
use domain::{Due, Notice, NoticeKind, ReadError, Salt, TableEvent, EVENT_VERSION};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::borrow::Cow;
use utoipa::openapi::schema::{OneOf, Schema};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};
use uuid::Uuid;

use ledger::chain::{self, ChainedEvent};

/// An event to append: its `type`, schema version `v` and `data`.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    pub kind: String,
    pub v: i32,
    pub data: Value,
}

impl NewEvent {
    pub fn new(kind: impl Into<String>, v: i32, data: Value) -> Self {
        Self {
            kind: kind.into(),
            v,
            data,
        }
    }

    /// An engine event in the current format ([`EVENT_VERSION`]): its data
    /// with a fresh salt from the thread's CSPRNG, so that its hash hides
    /// what redaction hides (see `domain::redaction`).
    pub fn sealed(event: &TableEvent) -> Self {
        let salt = Salt::draw(&mut rand::thread_rng());
        Self::new(event.kind(), EVENT_VERSION as i32, event.sealed_data(salt))
    }
}

/// An event as logged; serializes to the public format
/// `{seq, type, v, at, data, prev_hash, hash}`, and reads back from it (a
/// line of an exported log).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredEvent {
    pub seq: i64,
    #[serde(rename = "type")]
    pub kind: String,
    pub v: i32,
    /// RFC 3339 UTC with exactly six fractional digits.
    #[serde(serialize_with = "serialize_at", deserialize_with = "deserialize_at")]
    pub at: DateTime<Utc>,
    pub data: Value,
    pub prev_hash: String,
    pub hash: String,
}

/// The fields of a stored event besides its `type` and `data`, added to
/// each event type's `{type, data}` to make it a complete stored event.
#[derive(ToSchema)]
#[allow(dead_code)]
struct EventHead {
    /// 1, 2, … in the table's log.
    #[schema(minimum = 1)]
    seq: i64,
    /// The format version of `data` (2 adds its `salt`; 3 names seated
    /// persons by account id only).
    #[schema(minimum = 1, maximum = 3)]
    v: i32,
    /// RFC 3339 UTC with exactly six fractional digits.
    #[schema(format = DateTime)]
    at: String,
    /// The previous event's `hash` (64 zeros for the first).
    #[schema(pattern = "^[0-9a-f]{64}$")]
    prev_hash: String,
    /// SHA-256 of the event's canonical form with its whole data (docs/API.md).
    #[schema(pattern = "^[0-9a-f]{64}$")]
    hash: String,
}

/// The stored event's schema: one complete object per event type (its
/// head, its `type` as a one-value enum and its typed `data`), each a
/// component of its own, their union told apart by `type` (the domain's
/// `discriminator` and its mapping). Complete
/// objects rather than an `allOf` of the head and a union: a generator
/// (openapi-python-client) cannot take an `allOf` of a non-object, and
/// dropped the events with everything that held them.
fn event_schemas() -> (OneOf, Vec<(String, RefOr<Schema>)>) {
    let mut components = domain::schema::event_components();
    let union = match components
        .iter()
        .position(|(name, _)| name == domain::schema::EVENT_BODY)
    {
        Some(i) => match components.remove(i).1 {
            RefOr::T(Schema::OneOf(union)) => union,
            _ => unreachable!("the events' union is a oneOf"),
        },
        None => unreachable!("the domain names the events' union"),
    };
    let members: Vec<String> = union
        .items
        .iter()
        .filter_map(|item| match item {
            RefOr::Ref(r) => r.ref_location.rsplit('/').next().map(str::to_owned),
            RefOr::T(_) => None,
        })
        .collect();
    let RefOr::T(Schema::Object(head)) = EventHead::schema() else {
        unreachable!("the head is an object")
    };
    for (name, schema) in &mut components {
        if let (true, RefOr::T(Schema::Object(event))) = (members.contains(name), schema) {
            let body = std::mem::take(&mut event.properties);
            let (seq, rest) = head
                .properties
                .iter()
                .partition::<Vec<_>, _>(|(k, _)| *k == "seq");
            event
                .properties
                .extend(seq.into_iter().map(|(k, v)| (k.clone(), v.clone())));
            event.properties.extend(body);
            event
                .properties
                .extend(rest.into_iter().map(|(k, v)| (k.clone(), v.clone())));
            event.required.extend(head.required.iter().cloned());
        }
    }
    (union, components)
}

impl PartialSchema for StoredEvent {
    fn schema() -> RefOr<Schema> {
        let (mut union, _) = event_schemas();
        union.description = Some(
            "An event as logged: `{seq, type, v, at, data, prev_hash, hash}`, one complete \
             object per `type`, its data typed by it."
                .into(),
        );
        union.examples = vec![serde_json::json!({
            "seq": 10,
            "type": "card_played",
            "v": 2,
            "at": "2025-01-31T18:04:05.123456Z",
            "data": {"seat": 0, "card": "8H", "suit": "S", "announce": false, "salt": "4f0c2a1e9b7d3c5a8e6f1d2b0a9c8e7f"},
            "prev_hash": "5a1f0e0c9b7d3e2a4f6b8c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f",
            "hash": "0c9d8e7f6a5b4c3d2e1f5a1f0e0c9b7d3e2a4f6b8c1d0e9f8a7b6c5d4e3f2a1b"
        })];
        RefOr::T(Schema::OneOf(union))
    }
}

impl ToSchema for StoredEvent {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("StoredEvent")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.extend(event_schemas().1);
    }
}

impl StoredEvent {
    /// The engine's event (through its format version, see
    /// `domain::TableEvent::read`).
    pub fn event(&self) -> Result<TableEvent, ReadError> {
        // Through text: maps keyed by seat have string keys in JSON, which
        // serde_json reads back as numbers only from text.
        TableEvent::read(&self.kind, format_version(self.v), &self.data.to_string())
    }
}

/// A stored `v` as the engine's format number (a negative one, refused by
/// the table's check, reads as no format at all).
fn format_version(v: i32) -> u32 {
    u32::try_from(v).unwrap_or(0)
}

fn serialize_at<S: Serializer>(at: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&chain::format_at(*at))
}

/// Any RFC 3339 instant; one not written as [`chain::format_at`] writes it
/// then fails its hash.
fn deserialize_at<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
    let text = String::deserialize(d)?;
    DateTime::parse_from_rfc3339(&text)
        .map(|at| at.with_timezone(&Utc))
        .map_err(serde::de::Error::custom)
}

impl ChainedEvent for StoredEvent {
    fn seq(&self) -> i64 {
        self.seq
    }
    fn kind(&self) -> &str {
        &self.kind
    }
    fn v(&self) -> i32 {
        self.v
    }
    fn at(&self) -> String {
        chain::format_at(self.at)
    }
    fn data(&self) -> &Value {
        &self.data
    }
    fn prev_hash(&self) -> &str {
        &self.prev_hash
    }
    fn hash(&self) -> &str {
        &self.hash
    }
}

/// A table's new events chained to its log, stamped and hashed, ready for
/// `api::log::Log::append`.
#[derive(Debug, Clone)]
pub struct ChainedAppend {
    pub table_id: Uuid,
    /// The seq of the table's last event (0: none), the events follow it.
    pub expected_version: i64,
    /// The table's new status, when the events change it.
    pub status: Option<&'static str>,
    pub events: Vec<StoredEvent>,
    /// What becomes of the table's `due_at`.
    pub due: Due,
    /// The account the table waits for after the events (`None`: nobody,
    /// or the server plays the seat on turn): `game_tables.turn_account`.
    pub turn: Option<Uuid>,
    /// The feed items the events write, in order.
    pub notices: Vec<FeedNotice>,
    /// What becomes of the table's `turn_ending_at` (the turn's alarm).
    pub turn_ending: Due,
}

/// A feed item written with the events that cause it (docs/API.md "Finding
/// a game and coming back").
#[derive(Debug, Clone, PartialEq)]
pub struct FeedNotice {
    pub account_id: Uuid,
    pub kind: NoticeKind,
    /// The deadline of the turn it tells of, when it has one.
    pub deadline: Option<DateTime<Utc>>,
}

impl ChainedAppend {
    /// `events` after event `expected_version`, whose hash is `prev_hash`
    /// ([`chain::GENESIS_PREV_HASH`] for 0), all stamped now.
    pub fn new(
        table_id: Uuid,
        expected_version: i64,
        prev_hash: &str,
        events: Vec<NewEvent>,
        status: Option<&'static str>,
    ) -> Self {
        let at = chain::truncate_at(Utc::now());
        let at_text = chain::format_at(at);
        let mut prev_hash = prev_hash.to_owned();
        let events = events
            .into_iter()
            .enumerate()
            .map(|(i, e)| {
                let seq = expected_version + 1 + i as i64;
                let hash = chain::event_hash(&prev_hash, seq, &e.kind, e.v, &at_text, &e.data);
                StoredEvent {
                    seq,
                    kind: e.kind,
                    v: e.v,
                    at,
                    data: e.data,
                    prev_hash: std::mem::replace(&mut prev_hash, hash.clone()),
                    hash,
                }
            })
            .collect();
        Self {
            table_id,
            expected_version,
            status,
            events,
            due: Due::Keep,
            turn: None,
            notices: Vec::new(),
            turn_ending: Due::Keep,
        }
    }

    /// The same, setting the table's `due_at` as `due` says.
    pub fn with_due(self, due: Due) -> Self {
        Self { due, ..self }
    }

    /// The same, the table waiting for `turn` after the events.
    pub fn with_turn(self, turn: Option<Uuid>) -> Self {
        Self { turn, ..self }
    }

    /// The same, writing the feed items of `notices` (`your_turn` with the
    /// turn's deadline) and setting the turn's alarm as `turn_ending` says.
    pub fn with_notices(self, notices: Vec<Notice>, turn_ending: Due) -> Self {
        let deadline = self.due_at().flatten();
        let notices = notices
            .into_iter()
            .filter_map(|n| {
                Some(FeedNotice {
                    account_id: n.player.as_str().parse().ok()?,
                    kind: n.kind,
                    deadline: (n.kind == NoticeKind::YourTurn)
                        .then_some(deadline)
                        .flatten(),
                })
            })
            .collect();
        Self {
            notices,
            turn_ending,
            ..self
        }
    }

    /// The events' time (now, when there are none).
    pub fn at(&self) -> DateTime<Utc> {
        self.events.first().map_or_else(Utc::now, |e| e.at)
    }

    /// The table's `due_at` after the append: `None` to keep it as it is.
    pub fn due_at(&self) -> Option<Option<DateTime<Utc>>> {
        self.after(self.due)
    }

    /// The table's `turn_ending_at` after the append: `None` to keep it.
    pub fn turn_ending_at(&self) -> Option<Option<DateTime<Utc>>> {
        self.after(self.turn_ending)
    }

    fn after(&self, due: Due) -> Option<Option<DateTime<Utc>>> {
        match due {
            Due::Keep => None,
            Due::Clear => Some(None),
            Due::After(wait) => Some(chrono::Duration::from_std(wait).ok().map(|w| self.at() + w)),
        }
    }

    /// The table's version once the events are stored.
    pub fn new_version(&self) -> i64 {
        self.expected_version + self.events.len() as i64
    }
}

/// An event's seq, type, format and data as JSON text: what folding a log needs,
/// without decoding the data into a `serde_json::Value` first. Borrowed from
/// a batch of rows ([`EventRows`]), whose texts share one buffer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EventData<'a> {
    pub seq: i64,
    pub kind: &'a str,
    /// The event's format version (`v`).
    pub v: i32,
    pub data: &'a str,
}

impl EventData<'_> {
    /// The engine's event (see [`StoredEvent::event`]).
    pub fn event(&self) -> Result<TableEvent, ReadError> {
        TableEvent::read(self.kind, format_version(self.v), self.data)
    }
}

/// A batch of [`EventData`], in the order pushed: every row's type and data
/// in one text buffer, so a batch costs two allocations, not two a row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventRows {
    text: String,
    rows: Vec<RowAt>,
}

/// A row's numbers and where its texts end in [`EventRows::text`] (its type
/// begins where the previous row's data ends).
#[derive(Debug, Clone, Copy, PartialEq)]
struct RowAt {
    seq: i64,
    v: i32,
    kind_end: usize,
    data_end: usize,
}

impl EventRows {
    /// Room for `rows` rows of `text` bytes of type and data in all.
    pub fn with_capacity(rows: usize, text: usize) -> Self {
        Self {
            text: String::with_capacity(text),
            rows: Vec::with_capacity(rows),
        }
    }

    pub fn push(&mut self, event: EventData<'_>) {
        self.text.push_str(event.kind);
        let kind_end = self.text.len();
        self.text.push_str(event.data);
        self.rows.push(RowAt {
            seq: event.seq,
            v: event.v,
            kind_end,
            data_end: self.text.len(),
        });
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The bytes of type and data the rows hold.
    pub fn text_len(&self) -> usize {
        self.text.len()
    }

    pub fn clear(&mut self) {
        self.text.clear();
        self.rows.clear();
    }

    pub fn iter(&self) -> impl Iterator<Item = EventData<'_>> {
        let mut start = 0;
        self.rows.iter().map(move |row| {
            let event = EventData {
                seq: row.seq,
                kind: &self.text[start..row.kind_end],
                v: row.v,
                data: &self.text[row.kind_end..row.data_end],
            };
            start = row.data_end;
            event
        })
    }
}
