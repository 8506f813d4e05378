//! Who may see what of an event (docs/API.md "The event log"), decided once per
//! event type and field, and the salt that makes an event's hash a
//! commitment that hides.
//!
//! Every `match` here names every event type and destructures every field,
//! without a wildcard: adding an event, a field or a pending kind does not
//! compile until someone decides who sees it.
//!
//! A reader is shown an event [`Seen::Whole`] (its stored data, salt
//! included, so that the reader can recompute its hash) only when nothing in
//! it is hidden from them; otherwise [`Seen::Part`], data without the hidden
//! fields *and without the salt*: the hash they are given then binds the
//! server to the hidden cards but tells nothing about them (guessing the
//! cards is useless without 128 random bits). Once a round is over, the
//! replay and the log show data and salt, and every hash can be checked.

use std::collections::BTreeMap;

use rand::Rng;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::card::Card;
use crate::deck::DeckId;
#[cfg(feature = "openapi")]
use crate::event::SeatKey;
use crate::event::{
    CardPlayed, DrawReason, Event, GameEnded, Pending, RoundEnded, RoundStarted, Seat,
};
use crate::table::{BotReason, ResultCorrected, Seated, TableCreated, TableEvent};

/// The key of the salt in an event's `data` (from event version 2).
pub const SALT_KEY: &str = "salt";

/// 128 random bits stored in an event's data (32 lowercase hex digits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Salt([u8; 16]);

impl Salt {
    /// A fresh salt from `rng` (the server passes a CSPRNG).
    pub fn draw<R: Rng + ?Sized>(rng: &mut R) -> Salt {
        let mut bytes = [0u8; 16];
        rng.fill(&mut bytes);
        Salt(bytes)
    }

    /// Whether `text` is a salt as written: 32 lowercase hex digits.
    pub fn is_written(text: &str) -> bool {
        text.len() == 32 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    }

    /// 32 lowercase hex digits.
    pub fn to_hex(self) -> String {
        use std::fmt::Write as _;
        self.0.iter().fold(String::with_capacity(32), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
    }
}

/// What one reader (a seat of the game, or a spectator) may see of an event
/// while its round runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Seen {
    /// All of it: the stored data as is, salt included.
    Whole,
    /// Only this data: hidden fields and the salt left out, and
    /// [`PART_KEY`] `true` in their place.
    Part(Value),
}

/// The key a part of an event's data carries, always `true`, which no whole
/// data has: what tells the two shapes apart (docs/API.md "Redaction").
pub const PART_KEY: &str = "part";

impl Seen {
    fn part(data: impl Serialize) -> Seen {
        let mut data = serde_json::to_value(data).expect("redacted data serialises");
        if let Value::Object(map) = &mut data {
            map.insert(PART_KEY.into(), Value::Bool(true));
        }
        Seen::Part(data)
    }
}

/// `round_started` while its round runs: the reader's own hand (none for a
/// spectator), the size of the largest hand and of the stock.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RoundStartedSeen {
    pub round: u32,
    #[cfg_attr(feature = "openapi", schema(value_type = usize))]
    pub dealer: Seat,
    pub deck: DeckId,
    /// The reader's seat → its hand; empty for a spectator.
    #[cfg_attr(feature = "openapi", schema(value_type = BTreeMap<SeatKey, Vec<Card>>))]
    pub hands: BTreeMap<Seat, Vec<Card>>,
    /// Cards dealt to each seat.
    pub hand_size: usize,
    pub stock_size: usize,
    pub starter: Card,
    #[cfg_attr(feature = "openapi", schema(value_type = usize))]
    pub first_seat: Seat,
}

/// `cards_drawn` by another seat: how many, not which.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CardsDrawnSeen {
    #[cfg_attr(feature = "openapi", schema(value_type = usize))]
    pub seat: Seat,
    pub reason: DrawReason,
    pub count: usize,
}

/// `stock_reshuffled`: the new stock's size, not its order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StockReshuffledSeen {
    pub size: usize,
}

/// `turn_started` after another seat drew a card it may play: not the card.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TurnStartedSeen {
    #[cfg_attr(feature = "openapi", schema(value_type = usize))]
    pub seat: Seat,
    pub pending: DrawnUnseen,
    pub frozen: bool,
}

/// `bot_moved` for another seat while its round runs: not the seed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BotMovedSeen {
    #[cfg_attr(feature = "openapi", schema(value_type = usize))]
    pub seat: Seat,
    pub bot: String,
    pub reason: BotReason,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub playouts: Option<u32>,
}

/// A `drawn` pending whose card is hidden.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DrawnUnseen {
    pub kind: DrawnKind,
}

/// The kind of a [`DrawnUnseen`]: `drawn`, the one a part hides a card of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum DrawnKind {
    Drawn,
}

impl TableEvent {
    /// The data to store and hash: the event's data with `salt` in it.
    pub fn sealed_data(&self, salt: Salt) -> Value {
        let mut data = self.data();
        if let Value::Object(map) = &mut data {
            map.insert(SALT_KEY.into(), salt.to_hex().into());
        }
        data
    }

    /// What `reader` (a seat of the running game, `None` for a spectator or
    /// someone not seated) may see of this event.
    pub fn seen_by(&self, reader: Option<Seat>) -> Seen {
        match self {
            // The lobby is public: who sits where, and the rules.
            TableEvent::TableCreated(created) => table_created_seen(created),
            TableEvent::PlayerJoined(Seated {
                seat: _,
                account_id: _,
                bot: _,
                guest: _,
                // Public from the start: the shuffles are the server
                // seed's secret, which the seats' seeds only add to.
                client_seed: _,
            }) => Seen::Whole,
            TableEvent::PlayerLeft { seat: _ } => Seen::Whole,
            TableEvent::GameStarted { players: _ } => Seen::Whole,
            // Who is late, away, back, resigned or aborting, and which bot
            // moves, are public.
            TableEvent::TurnTimedOut {
                seat: _,
                deadline: _,
            } => Seen::Whole,
            TableEvent::SeatAway { seat: _ } => Seen::Whole,
            TableEvent::SeatBack { seat: _ } => Seen::Whole,
            TableEvent::PlayerResigned { seat: _ } => Seen::Whole,
            TableEvent::GameAborted { by: _ } => Seen::Whole,
            // A bot's seed is hidden from the other seats like its hand:
            // with the seed, its choice is a fixed function of that hand,
            // so each of its moves would test guesses of it. Once the
            // round is over, the log shows it, and every move made for a
            // seat can be checked.
            TableEvent::BotMoved {
                seat,
                bot,
                reason,
                seed: _,
                playouts,
            } => match reader == Some(*seat) {
                true => Seen::Whole,
                false => Seen::part(BotMovedSeen {
                    seat: *seat,
                    bot: bot.clone(),
                    reason: *reason,
                    playouts: *playouts,
                }),
            },
            TableEvent::BotSeated {
                seat: _,
                level: _,
                client_seed: _,
            } => Seen::Whole,
            // Logged only once the game is over (ended or aborted), when
            // nothing it derives is hidden any more.
            TableEvent::SeedRevealed { server_seed: _ } => Seen::Whole,
            TableEvent::RematchOffered {
                seat: _,
                table_id: _,
            } => Seen::Whole,
            TableEvent::RematchDeclined { seat: _ } => Seen::Whole,
            TableEvent::ResultCorrected(corrected) => result_corrected_seen(corrected),
            TableEvent::Game(e) => e.seen_by(reader),
        }
    }
}

/// Everyone sees a table's creation whole (the lobby is public).
fn table_created_seen(created: &TableCreated) -> Seen {
    let TableCreated {
        ruleset: _,
        rules: _,
        seats: _,
        creator: _,
        clock: _,
        // The invitation's code is never in the log.
        visibility: _,
        starts_when_full: _,
        bots_after: _,
        rematch_of: _,
        // A hash of 32 random bytes: it tells nothing of the seed.
        seed_hash: _,
    } = created;
    Seen::Whole
}

/// A correction comes after the game's end, when every card is shown;
/// which dispute and which admin are the contract's.
fn result_corrected_seen(corrected: &ResultCorrected) -> Seen {
    let ResultCorrected {
        grounds: _,
        by: _,
        correction: _,
        ranking: _,
        winners: _,
        losers: _,
        totals: _,
        rated: _,
    } = corrected;
    Seen::Whole
}

impl Event {
    /// What `reader` (a seat, `None` for a spectator) may see of this event
    /// while its round runs: its own hand and draws, never another hand,
    /// a card another seat drew or the stock's order.
    pub fn seen_by(&self, reader: Option<Seat>) -> Seen {
        match self {
            Event::RoundStarted(rs) => round_started_seen(rs, reader),
            Event::CardTurned { card: _ } => Seen::Whole,
            Event::CardPlayed(CardPlayed {
                seat: _,
                card: _,
                suit: _,
                letter: _,
                as_card: _,
                announce: _,
            }) => Seen::Whole,
            Event::CardsDrawn {
                seat,
                cards,
                reason,
            } => {
                if reader == Some(*seat) {
                    Seen::Whole
                } else {
                    Seen::part(CardsDrawnSeen {
                        seat: *seat,
                        reason: *reason,
                        count: cards.len(),
                    })
                }
            }
            Event::StockReshuffled { stock } => {
                Seen::part(StockReshuffledSeen { size: stock.len() })
            }
            Event::TurnPassed { seat: _ } => Seen::Whole,
            Event::Challenged {
                by: _,
                seat: _,
                penalty: _,
                loses_turn: _,
            } => Seen::Whole,
            Event::DirectionChanged { direction: _ } => Seen::Whole,
            Event::TurnSkipped { seat: _, reason: _ } => Seen::Whole,
            Event::TurnStarted {
                seat,
                pending,
                frozen,
            } => turn_started_seen(*seat, pending, *frozen, reader),
            Event::PlayerWentOut { seat: _, place: _ } => Seen::Whole,
            // The round is over: every hand left is shown.
            Event::RoundEnded(re) => {
                let RoundEnded {
                    round: _,
                    out_order: _,
                    hands: _,
                    points: _,
                    totals: _,
                    blocked: _,
                } = &**re;
                Seen::Whole
            }
            Event::GameEnded(ge) => {
                let GameEnded {
                    ranking: _,
                    winners: _,
                    losers: _,
                    reason: _,
                } = &**ge;
                Seen::Whole
            }
        }
    }
}

/// A deal as `reader` may see it: the reader's own hand, the others'
/// sizes, the stock's size.
fn round_started_seen(rs: &RoundStarted, reader: Option<Seat>) -> Seen {
    let RoundStarted {
        round,
        dealer,
        deck,
        hands,
        stock,
        starter,
        first_seat,
    } = rs;
    Seen::part(RoundStartedSeen {
        round: *round,
        dealer: *dealer,
        deck: deck.clone(),
        hands: reader
            .and_then(|s| hands.get(&s).map(|h| (s, h.clone())))
            .into_iter()
            .collect(),
        hand_size: hands.values().map(Vec::len).max().unwrap_or(0),
        stock_size: stock.len(),
        starter: *starter,
        first_seat: *first_seat,
    })
}

/// A turn as `reader` may see it: whole, but the card just drawn, which is
/// its drawer's alone (D27).
fn turn_started_seen(seat: Seat, pending: &Pending, frozen: bool, reader: Option<Seat>) -> Seen {
    match pending {
        Pending::None
        | Pending::Attack { .. }
        | Pending::Draw { .. }
        | Pending::MustReplay { .. }
        | Pending::MayReplay => Seen::Whole,
        Pending::Drawn { card: _ } if reader == Some(seat) => Seen::Whole,
        Pending::Drawn { card: _ } => Seen::part(TurnStartedSeen {
            seat,
            pending: DrawnUnseen {
                kind: DrawnKind::Drawn,
            },
            frozen,
        }),
    }
}

/// D42 through a table: what a bot's move shows each seat.
#[cfg(test)]
mod table_tests {
    use super::*;
    use crate::bots::Level;
    use crate::table::presence_tests::{own_move, play_for, run, started_with};

    #[test]
    fn d42_a_bots_seed_is_hidden_from_the_other_seats_like_a_card() {
        let (mut table, mut log) = started_with(&["a"], &[Level::Random]);
        while table.automatic().is_none() {
            own_move(&mut table, &mut log);
        }
        let command = play_for(77);
        let events = run(&mut table, &mut log, command);
        let moved = &events[0];
        for reader in [Some(0), None] {
            let Seen::Part(part) = moved.seen_by(reader) else {
                panic!("the seed shown to {reader:?}");
            };
            assert!(part.get("seed").is_none(), "{part}");
            assert_eq!(part[PART_KEY], true, "a part says it is one");
            assert_eq!(part["seat"], 1);
            assert_eq!(part["bot"], "random@1");
        }
        assert_eq!(moved.seen_by(Some(1)), Seen::Whole);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn d27_a_drawn_card_is_its_drawers_and_the_others_part_says_it_is_one() {
        let card = "9C".parse().expect("a card");
        let pending = Pending::Drawn { card };
        assert_eq!(turn_started_seen(1, &pending, false, Some(1)), Seen::Whole);
        for reader in [Some(0), None] {
            let Seen::Part(part) = turn_started_seen(1, &pending, false, reader) else {
                panic!("the drawn card shown to {reader:?}");
            };
            let expected = serde_json::json!({
                "seat": 1, "pending": {"kind": "drawn"}, "frozen": false, PART_KEY: true
            });
            assert_eq!(part, expected);
        }
        // Nothing else is hidden, so nothing else is a part.
        let attack = Pending::Attack {
            count: 1,
            per_card: 2,
        };
        assert_eq!(turn_started_seen(1, &attack, false, Some(0)), Seen::Whole);
    }

    #[test]
    fn a_salt_is_32_lowercase_hex_digits_and_differs_each_time() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let a = Salt::draw(&mut rng).to_hex();
        let b = Salt::draw(&mut rng).to_hex();
        assert!(Salt::is_written(&a), "{a}");
        assert!(!Salt::is_written(&a[1..]) && !Salt::is_written(&format!("{a}0")));
        assert_ne!(a, b);
    }

    #[test]
    fn sealed_data_parses_back_to_the_same_event() {
        let e = TableEvent::Game(Event::TurnPassed { seat: 1 });
        let data = e.sealed_data(Salt([0xab; 16]));
        assert_eq!(data["salt"], "abababababababababababababababab");
        assert_eq!(TableEvent::from_parts("turn_passed", data).unwrap(), e);
    }
}
