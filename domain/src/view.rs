//! What a seat may see (docs/API.md "The player view"), and the omniscient view of
//! replays. A seat's view never holds another hand, the stock order, or a
//! card another player has just drawn.

use serde::{Deserialize, Serialize};

use crate::card::{Card, Face, Letter, Suit};
use crate::event::{Direction, GameEnded, Move, Pending, PendingKind, Seat, Target};
use crate::game::{Game, Round};

/// One seat's view of the table (or a spectator's, with `my_seat` null).
/// Every field is always sent; the optional ones are null when they do not
/// apply.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"round": 2, "my_seat": 0, "hand": ["8H", "10S", "QC"], "top_card": "7H", "active_suit": null, "active_letter": null, "active_rank": null, "direction": "clockwise", "current_seat": 0, "stock_size": 30, "discard_size": 6, "players": [{"seat": 0, "account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "bot": null, "username": "alice", "erased": false, "hand_size": 3, "total": 12, "announced": false, "out": false, "away": false, "resigned": false}, {"seat": 1, "account_id": "7d1e0c8a-3b9f-4e2d-8c6a-5f4b3a2e1d00", "bot": null, "username": "bob", "erased": false, "hand_size": 1, "total": 40, "announced": true, "out": false, "away": false, "resigned": false}], "pending": {"kind": "none", "seat": null, "draw": null, "count": null, "card": null, "frozen": false, "challengeable": null}, "legal_moves": [{"type": "play", "card": "8H", "suit": "S", "announce": false}, {"type": "draw"}], "result": null})))]
// `P` is what is said of each player: the engine's [`PlayerView`], or what a
// table adds to it (who sits there, through [`Game::view_with`]); the
// example is the API's, where players have names.
pub struct SeatView<P = PlayerView> {
    /// The current (or last) round; 0 before the first deal.
    pub round: u32,
    /// The viewer's seat; null for a spectator.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<usize>, required = true))]
    pub my_seat: Option<Seat>,
    /// The viewer's hand (empty for a spectator).
    #[cfg_attr(feature = "openapi", schema(example = json!(["8H", "10S", "QC"])))]
    pub hand: Vec<Card>,
    /// Null before the first deal.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub top_card: Option<Card>,
    /// The suit to follow when it is not the top card's own (an 8, a joker).
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub active_suit: Option<Suit>,
    /// The letter to follow when it is not the top card's own (a star, a pétard).
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub active_letter: Option<Letter>,
    /// The rank to follow when it is not the top card's (a 757 joker, a pétard).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Face>, required = true))]
    pub active_rank: Option<String>,
    pub direction: Direction,
    /// The seat that must act; null when no round is being played.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<usize>, required = true))]
    pub current_seat: Option<Seat>,
    pub stock_size: usize,
    pub discard_size: usize,
    /// Every seat, in seat order.
    pub players: Vec<P>,
    /// What constrains the seat on turn, as far as the viewer may know.
    pub pending: PendingView,
    /// Every move the server would accept from the viewer now, in the form
    /// to post back, in this order: a challenge (when one is open), the
    /// plays in the order of the hand (each choice of suit or letter; a play
    /// that leaves one card with `announce: true` first), then `draw`, then
    /// `pass`. Empty for a spectator and off turn.
    pub legal_moves: Vec<Move>,
    /// The final ranking once the game is over (null before).
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub result: Option<GameEnded>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"seat": 1, "hand_size": 1, "total": 40, "announced": true, "out": false})))]
pub struct PlayerView {
    #[cfg_attr(feature = "openapi", schema(value_type = usize))]
    pub seat: Seat,
    pub hand_size: usize,
    pub total: i32,
    /// Announced their last card ("Carte !").
    pub announced: bool,
    /// Out of this round (placement scoring).
    pub out: bool,
}

/// What constrains the seat on turn, as far as the viewer may know.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"kind": "attack", "seat": 2, "draw": 4, "count": 2, "card": null, "frozen": false, "challengeable": null})))]
pub struct PendingView {
    pub kind: PendingKind,
    /// The seat it constrains.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<usize>, required = true))]
    pub seat: Option<Seat>,
    /// Cards that seat draws if it takes the penalty.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub draw: Option<u32>,
    /// Cards in an attack chain (D3).
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub count: Option<u32>,
    /// The card just drawn, shown only to the seat that drew it.
    #[cfg_attr(feature = "openapi", schema(required = true, example = "9C"))]
    pub card: Option<Card>,
    /// D12: the pile is frozen.
    pub frozen: bool,
    /// D8: the seat whose unannounced last card may be challenged now.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<usize>, required = true))]
    pub challengeable: Option<Seat>,
}

/// The omniscient state of a round, for replays and audits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"round": 1, "dealer": 1, "hands": [["8H", "2S"], ["QC"]], "stock": ["3D", "KH"], "discard": ["5C", "7C"], "top_card": "7C", "active_suit": null, "active_letter": null, "active_rank": null, "direction": "clockwise", "current_seat": 0, "pending": {"kind": "none", "seat": null, "draw": null, "count": null, "card": null, "frozen": false, "challengeable": null}, "out_order": [], "announced": [false, false], "totals": [0, 0]})))]
pub struct FullView {
    pub round: u32,
    #[cfg_attr(feature = "openapi", schema(value_type = usize))]
    pub dealer: Seat,
    /// Every hand, by seat.
    #[cfg_attr(feature = "openapi", schema(example = json!([["8H", "2S"], ["QC"]])))]
    pub hands: Vec<Vec<Card>>,
    /// Top card last.
    #[cfg_attr(feature = "openapi", schema(example = json!(["3D", "KH"])))]
    pub stock: Vec<Card>,
    /// Top card last.
    #[cfg_attr(feature = "openapi", schema(example = json!(["5C", "7C"])))]
    pub discard: Vec<Card>,
    pub top_card: Card,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub active_suit: Option<Suit>,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub active_letter: Option<Letter>,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Face>, required = true))]
    pub active_rank: Option<String>,
    pub direction: Direction,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<usize>, required = true))]
    pub current_seat: Option<Seat>,
    pub pending: PendingView,
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<usize>))]
    pub out_order: Vec<Seat>,
    pub announced: Vec<bool>,
    pub totals: Vec<i32>,
}

impl<P> SeatView<P> {
    /// The view of a table with no round dealt: before the first deal (the
    /// lobby), or after the game.
    pub fn nothing_dealt(
        my_seat: Option<Seat>,
        players: Vec<P>,
        result: Option<GameEnded>,
    ) -> SeatView<P> {
        SeatView {
            round: 0,
            my_seat,
            hand: Vec::new(),
            top_card: None,
            active_suit: None,
            active_letter: None,
            active_rank: None,
            direction: Direction::Clockwise,
            current_seat: None,
            stock_size: 0,
            discard_size: 0,
            players,
            pending: PendingView::none(),
            legal_moves: Vec::new(),
            result,
        }
    }
}

impl PlayerView {
    /// A seated player before the first deal: no cards, no points.
    pub fn waiting(seat: Seat) -> PlayerView {
        PlayerView {
            seat,
            hand_size: 0,
            total: 0,
            announced: false,
            out: false,
        }
    }
}

impl PendingView {
    /// Nothing pending: no round, or a plain turn on an unfrozen pile.
    pub fn none() -> PendingView {
        PendingView {
            kind: PendingKind::None,
            seat: None,
            draw: None,
            count: None,
            card: None,
            frozen: false,
            challengeable: None,
        }
    }
}

struct Active {
    suit: Option<Suit>,
    letter: Option<Letter>,
    rank: Option<String>,
}

fn active(r: &Round) -> Active {
    let top = r.top();
    match r.target {
        Target::French { face, suit } => Active {
            suit: suit.filter(|s| top.suit() != Some(*s)),
            rank: face
                .filter(|f| *f != top.face() && !matches!(f, Face::Joker))
                .map(|f| f.to_string()),
            letter: None,
        },
        Target::Letter(l) => Active {
            suit: None,
            letter: (top.letter() != Some(l)).then_some(l),
            rank: None,
        },
        Target::Any => Active {
            suit: None,
            letter: None,
            rank: None,
        },
    }
}

fn pending_view(r: &Round, viewer: Option<Seat>) -> PendingView {
    let (kind, draw, count, card) = match r.pending {
        Pending::None => (PendingKind::None, None, None, None),
        Pending::Attack { count, per_card } => (
            PendingKind::Attack,
            Some(count * per_card),
            Some(count),
            None,
        ),
        Pending::Draw { total } => (PendingKind::Draw, Some(total), None, None),
        Pending::MustReplay { penalty } => (PendingKind::MustReplay, Some(penalty), None, None),
        Pending::MayReplay => (PendingKind::MayReplay, None, None, None),
        Pending::Drawn { card } => (
            PendingKind::Drawn,
            None,
            None,
            (viewer == r.current).then_some(card),
        ),
    };
    PendingView {
        kind,
        seat: if r.pending == Pending::None {
            None
        } else {
            r.current
        },
        draw,
        count,
        card,
        frozen: r.frozen,
        challengeable: r
            .window
            .filter(|s| r.hands[*s].len() == 1 && !r.announced[*s]),
    }
}

impl Game {
    /// What `viewer` may see; `None` is a spectator (no hand, no moves).
    pub fn view(&self, viewer: Option<Seat>) -> SeatView {
        self.view_with(viewer, Some)
    }

    /// [`Game::view`], with what is said of each player made by `who` from
    /// the engine's [`PlayerView`] (a player for whom it gives `None` is
    /// left out).
    pub fn view_with<P>(
        &self,
        viewer: Option<Seat>,
        who: impl FnMut(PlayerView) -> Option<P>,
    ) -> SeatView<P> {
        let viewer = viewer.filter(|s| *s < self.seats);
        let players = (0..self.seats)
            .map(|seat| PlayerView {
                seat,
                hand_size: self.round.as_ref().map_or(0, |r| r.hands[seat].len()),
                total: self.totals[seat],
                announced: self.round.as_ref().is_some_and(|r| r.announced[seat]),
                out: self.round.as_ref().is_some_and(|r| r.is_out(seat)),
            })
            .filter_map(who)
            .collect();
        let Some(r) = self.round.as_ref() else {
            return SeatView::nothing_dealt(viewer, players, self.result.clone());
        };
        let a = active(r);
        SeatView {
            round: r.number,
            my_seat: viewer,
            hand: viewer.map(|s| r.hands[s].clone()).unwrap_or_default(),
            top_card: Some(r.top()),
            active_suit: a.suit,
            active_letter: a.letter,
            active_rank: a.rank,
            direction: r.direction,
            current_seat: r.current,
            stock_size: r.stock.len(),
            discard_size: r.discard.len(),
            players,
            pending: pending_view(r, viewer),
            legal_moves: viewer.map(|s| self.legal_moves(s)).unwrap_or_default(),
            result: self.result.clone(),
        }
    }

    /// Everything about the current (or last) round, every hand visible.
    pub fn full_view(&self) -> Option<FullView> {
        let r = self.round.as_ref()?;
        let a = active(r);
        Some(FullView {
            round: r.number,
            dealer: r.dealer,
            hands: r.hands.clone(),
            stock: r.stock.clone(),
            discard: r.discard.clone(),
            top_card: r.top(),
            active_suit: a.suit,
            active_letter: a.letter,
            active_rank: a.rank,
            direction: r.direction,
            current_seat: r.current,
            pending: pending_view(r, r.current),
            out_order: r.out.clone(),
            announced: r.announced.clone(),
            totals: self.totals.clone(),
        })
    }
}
