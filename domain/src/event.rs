//! Moves (what a player asks) and events (what happened), in the public
//! shapes of docs/API.md. Events are past tense and versioned; `evolve` applies
//! them and cannot fail.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::card::{Card, Letter, Suit};
use crate::deck::DeckId;

/// A seat at the table, 0..n-1.
pub type Seat = usize;

/// A seat as the key of a JSON object (`"0"`, `"1"`, …): maps keyed by seat
/// are written so. Only a schema: the engine keys its maps by [`Seat`].
#[cfg(feature = "openapi")]
#[derive(Debug, utoipa::ToSchema)]
#[schema(value_type = String, pattern = "^(0|[1-9][0-9]*)$", example = "0")]
pub struct SeatKey(pub String);

/// The version of the event format this crate writes (docs/API.md `v`). Version
/// 2 adds a `salt` to every event's data (see [`crate::redaction`]); version
/// 3 names a seated person by account id only (no `username`: a name bound
/// by a hash could never be erased). Versions 1 (no salt) and 2 still parse
/// and fold the same, their names unread.
pub const EVENT_VERSION: u32 = 3;

/// A player's move, exactly as posted to `POST /v1/tables/{id}/moves`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"type": "play", "card": "8H", "suit": "S", "announce": false})))]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Move {
    Play {
        #[cfg_attr(feature = "openapi", schema(example = "8H"))]
        card: Card,
        /// The suit an 8 (or a suit-naming joker) names: C, D, H or S.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(example = "S"))]
        suit: Option<Suit>,
        /// The letter a star stands for.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(example = "K"))]
        letter: Option<Letter>,
        /// For a 757 joker: the card it stands for (D13, D29).
        #[serde(rename = "as", default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(example = "QH"))]
        as_card: Option<Card>,
        #[serde(default)]
        announce: bool,
    },
    // Objects with no field but `type`, not unit variants, which serde
    // would let carry unknown fields: every move refuses them alike.
    /// Draw from the stock: `{"type": "draw"}`, no other field.
    Draw {},
    /// End the turn where the rules allow it: `{"type": "pass"}`, no
    /// other field.
    Pass {},
    Challenge {
        #[cfg_attr(feature = "openapi", schema(value_type = usize))]
        seat: Seat,
    },
}

/// What a played card names besides itself (D29): the suit an 8 (or a
/// suit-naming joker) names, the letter a star stands for, or the card a
/// 757 joker stands for. The engine checks that a move carries exactly the
/// one its card needs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Choice {
    pub suit: Option<Suit>,
    pub letter: Option<Letter>,
    pub as_card: Option<Card>,
}

impl Choice {
    /// Nothing named: what a plain card carries.
    pub fn is_empty(&self) -> bool {
        *self == Choice::default()
    }

    /// Only a suit.
    pub fn is_suit(&self) -> bool {
        self.suit.is_some() && self.letter.is_none() && self.as_card.is_none()
    }

    /// Only a letter.
    pub fn is_letter(&self) -> bool {
        self.letter.is_some() && self.suit.is_none() && self.as_card.is_none()
    }
}

impl Move {
    pub fn play(card: Card) -> Move {
        Move::Play {
            card,
            suit: None,
            letter: None,
            as_card: None,
            announce: false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = "clockwise"))]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Increasing seat numbers.
    Clockwise,
    Counterclockwise,
}

impl Direction {
    pub fn flipped(self) -> Direction {
        match self {
            Direction::Clockwise => Direction::Counterclockwise,
            Direction::Counterclockwise => Direction::Clockwise,
        }
    }
}

/// What the next card must match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// A French card or what a wild card named: its rank (or the joker) and
    /// suit; either may be absent (a suit-naming joker has no rank to match).
    French {
        face: Option<crate::card::Face>,
        suit: Option<Suit>,
    },
    Letter(Letter),
    /// Anything goes (a 757 joker starter, a star starter, D10, D20).
    Any,
}

/// What constrains the seat on turn (docs/RULES.md §3.3, D28).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Pending {
    #[default]
    None,
    /// `attack_chain`: answer with the same rank or a canceller, or draw
    /// `per_card × count` and lose the turn (D3).
    Attack { count: u32, per_card: u32 },
    /// `stacking`: answer with a draw card, or draw `total` and lose the turn (D25).
    Draw { total: u32 },
    /// `must_replay`: play again on the ten, or draw `penalty` and end the turn (D5, D33).
    MustReplay { penalty: u32 },
    /// `may_replay`: play one more card legal on the queen, or pass (D11).
    MayReplay,
    /// After a draw under `draw_then_may_play`: play that card or pass (D27).
    Drawn { card: Card },
}

/// What is pending, by kind: nothing, an attack to answer or take (D3), a
/// penalty to draw, a card to cover (`must_replay`, D5) or that may be
/// followed (`may_replay`), a drawn card that may be played (`drawn`).
// The stored format's names (a `turn_started`'s `pending.kind`), owned here
// with the events; the views show them as they are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = "attack"))]
#[serde(rename_all = "snake_case")]
pub enum PendingKind {
    None,
    Attack,
    Draw,
    MustReplay,
    MayReplay,
    Drawn,
}

/// Read by hand: serde's derive for an internally tagged enum buffers every
/// value before it finds the tag, and every `turn_started` of a replay holds
/// a `Pending`. Same shape as the derived `Serialize`: `{"kind": …, fields}`,
/// in any order; unknown fields are ignored, as the derive would.
impl<'de> Deserialize<'de> for Pending {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, IgnoredAny, MapAccess, Visitor};

        use PendingKind as Kind;

        #[derive(Deserialize)]
        #[serde(field_identifier, rename_all = "snake_case")]
        enum Field {
            Kind,
            Count,
            PerCard,
            Total,
            Penalty,
            Card,
            #[serde(other)]
            Other,
        }
        fn set<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
            slot: &mut Option<T>,
            name: &'static str,
            map: &mut A,
        ) -> Result<(), A::Error> {
            if slot.is_some() {
                return Err(de::Error::duplicate_field(name));
            }
            *slot = Some(map.next_value()?);
            Ok(())
        }
        fn get<T, E: de::Error>(slot: Option<T>, name: &'static str) -> Result<T, E> {
            slot.ok_or_else(|| E::missing_field(name))
        }

        struct PendingVisitor;
        impl<'de> Visitor<'de> for PendingVisitor {
            type Value = Pending;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a pending constraint {kind, …}")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Pending, A::Error> {
                let (mut kind, mut count, mut per_card, mut total, mut penalty, mut card) =
                    (None, None, None, None, None, None);
                while let Some(field) = map.next_key()? {
                    match field {
                        Field::Kind => set(&mut kind, "kind", &mut map)?,
                        Field::Count => set(&mut count, "count", &mut map)?,
                        Field::PerCard => set(&mut per_card, "per_card", &mut map)?,
                        Field::Total => set(&mut total, "total", &mut map)?,
                        Field::Penalty => set(&mut penalty, "penalty", &mut map)?,
                        Field::Card => set(&mut card, "card", &mut map)?,
                        Field::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(match get(kind, "kind")? {
                    Kind::None => Pending::None,
                    Kind::Attack => Pending::Attack {
                        count: get(count, "count")?,
                        per_card: get(per_card, "per_card")?,
                    },
                    Kind::Draw => Pending::Draw {
                        total: get(total, "total")?,
                    },
                    Kind::MustReplay => Pending::MustReplay {
                        penalty: get(penalty, "penalty")?,
                    },
                    Kind::MayReplay => Pending::MayReplay,
                    Kind::Drawn => Pending::Drawn {
                        card: get(card, "card")?,
                    },
                })
            }
        }
        d.deserialize_map(PendingVisitor)
    }
}

/// Why cards were drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum DrawReason {
    Draw,
    Penalty,
    Challenge,
}

/// Why a seat loses its turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// It drew a penalty it could not answer (`draw_skip`, `firecracker`, D4, D28).
    Penalty,
    /// A `skip` card.
    Skip,
    /// It lost its turn to a successful challenge (S3).
    Challenge,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RoundStarted {
    pub round: u32,
    #[cfg_attr(feature = "openapi", schema(value_type = usize))]
    pub dealer: Seat,
    pub deck: DeckId,
    #[cfg_attr(feature = "openapi", schema(value_type = BTreeMap<SeatKey, Vec<Card>>))]
    pub hands: BTreeMap<Seat, Vec<Card>>,
    /// The stock after the deal and the starter, top card last.
    pub stock: Vec<Card>,
    pub starter: Card,
    #[cfg_attr(feature = "openapi", schema(value_type = usize))]
    pub first_seat: Seat,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CardPlayed {
    #[cfg_attr(feature = "openapi", schema(value_type = usize))]
    pub seat: Seat,
    pub card: Card,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suit: Option<Suit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub letter: Option<Letter>,
    #[serde(rename = "as", default, skip_serializing_if = "Option::is_none")]
    pub as_card: Option<Card>,
    pub announce: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"round": 3, "out_order": [1], "hands": {"0": ["8S", "QD"], "1": []}, "points": {"0": 60, "1": 0}, "totals": {"0": 112, "1": 40}, "blocked": false})))]
pub struct RoundEnded {
    pub round: u32,
    /// Seats in the order they went out (in placement scoring a blocked
    /// round may follow some going out, D31).
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<usize>))]
    pub out_order: Vec<Seat>,
    /// Seat → the cards left in hand.
    #[cfg_attr(feature = "openapi", schema(value_type = BTreeMap<SeatKey, Vec<Card>>))]
    pub hands: BTreeMap<Seat, Vec<Card>>,
    /// Seat → points of the round.
    #[cfg_attr(feature = "openapi", schema(value_type = BTreeMap<SeatKey, i32>))]
    pub points: BTreeMap<Seat, i32>,
    /// Seat → running total.
    #[cfg_attr(feature = "openapi", schema(value_type = BTreeMap<SeatKey, i32>))]
    pub totals: BTreeMap<Seat, i32>,
    /// The round ended because nobody could draw or play (D31).
    pub blocked: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"seat": 1, "total": 87, "place": 1})))]
pub struct Placing {
    #[cfg_attr(feature = "openapi", schema(value_type = usize))]
    pub seat: Seat,
    pub total: i32,
    /// 1 is best; tied players share the place (D21).
    pub place: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"ranking": [{"seat": 1, "total": 87, "place": 1}, {"seat": 0, "total": 512, "place": 2}], "winners": [1], "losers": [0]})))]
pub struct GameEnded {
    pub ranking: Vec<Placing>,
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<usize>))]
    pub winners: Vec<Seat>,
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<usize>))]
    pub losers: Vec<Seat>,
    /// Why the game ended (absent in logs written before D40: the end rule).
    #[serde(default)]
    pub reason: EndReason,
}

/// Why a game ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// The rules' end condition (a threshold, a number of rounds).
    #[default]
    EndCondition,
    /// Fewer than two seats were left unresigned, or no person among them (D40).
    Resigned,
}

/// Everything that can happen in a game. Serialised as `{type, data}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum Event {
    // The large, rare events are boxed so that an event is small to move.
    RoundStarted(Box<RoundStarted>),
    /// A card turned from the stock onto the starter (S3 pétard starter, D20).
    CardTurned {
        card: Card,
    },
    CardPlayed(CardPlayed),
    CardsDrawn {
        #[cfg_attr(feature = "openapi", schema(value_type = usize))]
        seat: Seat,
        cards: Vec<Card>,
        reason: DrawReason,
    },
    /// The discard pile, less the cards kept on top (D30), became the stock.
    StockReshuffled {
        stock: Vec<Card>,
    },
    TurnPassed {
        #[cfg_attr(feature = "openapi", schema(value_type = usize))]
        seat: Seat,
    },
    Challenged {
        #[cfg_attr(feature = "openapi", schema(value_type = usize))]
        by: Seat,
        #[cfg_attr(feature = "openapi", schema(value_type = usize))]
        seat: Seat,
        penalty: u32,
        loses_turn: bool,
    },
    DirectionChanged {
        direction: crate::event::Direction,
    },
    TurnSkipped {
        #[cfg_attr(feature = "openapi", schema(value_type = usize))]
        seat: Seat,
        reason: SkipReason,
    },
    /// Whose turn it is now and what constrains them; `frozen` is the state of
    /// the pile (D12).
    TurnStarted {
        #[cfg_attr(feature = "openapi", schema(value_type = usize))]
        seat: Seat,
        pending: Pending,
        frozen: bool,
    },
    PlayerWentOut {
        #[cfg_attr(feature = "openapi", schema(value_type = usize))]
        seat: Seat,
        place: usize,
    },
    RoundEnded(Box<RoundEnded>),
    GameEnded(Box<GameEnded>),
}

impl Event {
    /// The `type` of the public log.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::RoundStarted(_) => "round_started",
            Event::CardTurned { .. } => "card_turned",
            Event::CardPlayed(_) => "card_played",
            Event::CardsDrawn { .. } => "cards_drawn",
            Event::StockReshuffled { .. } => "stock_reshuffled",
            Event::TurnPassed { .. } => "turn_passed",
            Event::Challenged { .. } => "challenged",
            Event::DirectionChanged { .. } => "direction_changed",
            Event::TurnSkipped { .. } => "turn_skipped",
            Event::TurnStarted { .. } => "turn_started",
            Event::PlayerWentOut { .. } => "player_went_out",
            Event::RoundEnded(_) => "round_ended",
            Event::GameEnded(_) => "game_ended",
        }
    }
}
