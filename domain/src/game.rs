//! The state of a game and `evolve`, the only function that changes it.
//! `evolve` applies facts and cannot fail; every rule is in `engine`.

use std::sync::Arc;

use crate::card::{Card, CardSet, Face};
use crate::deck::DeckId;
use crate::event::{
    CardPlayed, Direction, DrawReason, Event, GameEnded, Pending, RoundEnded, Seat, SkipReason,
    Target,
};
use crate::fair::ClientSeed;
use crate::rules::{Book, Effect, Rules, RulesError};

// One type, and one spelling, from a query to the store to an answer.
/// Where a table stands: `waiting`, `playing`, `finished`, or `aborted`
/// (D41: ended before every person had moved; no ranking).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = TableStatus, example = "playing"))]
pub enum Status {
    /// No round dealt yet.
    Waiting,
    Playing,
    Finished,
    Aborted,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Waiting => "waiting",
            Status::Playing => "playing",
            Status::Finished => "finished",
            Status::Aborted => "aborted",
        }
    }
}

impl std::str::FromStr for Status {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        [
            Status::Waiting,
            Status::Playing,
            Status::Finished,
            Status::Aborted,
        ]
        .into_iter()
        .find(|status| status.as_str() == s)
        .ok_or_else(|| format!("not a table status: {s:?}"))
    }
}

/// A whole game at one table: rounds until the end condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Game {
    pub(crate) rules: Arc<Rules>,
    pub(crate) book: Arc<Book>,
    pub(crate) seats: usize,
    /// The deck every deal of this game records.
    pub(crate) deck_id: DeckId,
    /// The seats' client seeds, in seat order, as the game started: part of
    /// every shuffle's message (docs/API.md "Fair deals").
    pub(crate) clients: Vec<ClientSeed>,
    pub(crate) totals: Vec<i32>,
    pub(crate) history: Vec<RoundEnded>,
    pub(crate) round: Option<Round>,
    pub(crate) result: Option<GameEnded>,
}

/// One round (manche), from the deal to someone going out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Round {
    pub number: u32,
    pub dealer: Seat,
    pub deck: DeckId,
    pub hands: Vec<Vec<Card>>,
    /// Top card last.
    pub stock: Vec<Card>,
    /// Top card last.
    pub discard: Vec<Card>,
    pub target: Target,
    /// What may be played on `target` (`Book::playable_on`), kept with it.
    pub(crate) on_target: CardSet,
    pub direction: Direction,
    /// None once the round has ended.
    pub current: Option<Seat>,
    pub pending: Pending,
    /// D12: only the freezing rank or an unfreezer is legal.
    pub frozen: bool,
    pub announced: Vec<bool>,
    /// D8: the seat whose unannounced last card may be challenged.
    pub window: Option<Seat>,
    /// S3: turns a seat must lose after a successful challenge.
    pub owed_skips: Vec<u32>,
    /// D11: seats that have finished a turn in which they acted.
    pub played_a_turn: Vec<bool>,
    /// Did the seat on turn act (play, draw, pass) in this turn?
    pub acted: bool,
    pub out: Vec<Seat>,
    /// D31: consecutive turns that ended with an empty draw.
    pub idle: usize,
    /// Reshuffles of the stock so far in this round: the next is shuffle
    /// `reshuffles + 1` (docs/API.md "Fair deals").
    pub reshuffles: u32,
    /// Cards in play in this round (invariant, docs/RULES.md §8).
    pub size: usize,
    /// The distinct cards of each hand, kept with `hands` by `evolve`, so
    /// that what a seat may play is a set operation.
    pub(crate) held: Vec<CardSet>,
    /// The cards the deal holds more than one of (the jokers, a letter,
    /// every card with two decks): only these may stay in a hand that plays one.
    pub(crate) repeated: CardSet,
}

impl Round {
    pub fn top(&self) -> Card {
        *self
            .discard
            .last()
            .expect("the discard pile is never empty")
    }

    pub fn is_out(&self, seat: Seat) -> bool {
        self.out.contains(&seat)
    }

    pub fn active_count(&self) -> usize {
        self.hands.len() - self.out.len()
    }

    pub fn card_count(&self) -> usize {
        self.hands.iter().map(Vec::len).sum::<usize>() + self.stock.len() + self.discard.len()
    }

    pub fn is_running(&self) -> bool {
        self.current.is_some()
    }

    // The events of every move, applied by `evolve` and, directly, by the
    // engine as it emits them (which knows their seats are at the table).

    /// `card_played`.
    pub(crate) fn card_played(&mut self, book: &Book, played: &CardPlayed) {
        let r = self;
        let &CardPlayed {
            seat,
            card,
            suit,
            letter,
            as_card,
            announce,
        } = played;
        let hand = &mut r.hands[seat];
        take_from_hand(hand, card);
        if !r.repeated.contains(card) || !hand.contains(&card) {
            r.held[seat] = r.held[seat].without(CardSet::of(card));
        }
        r.discard.push(card);
        let transparent = matches!(book.effect(card), Some(Effect::Firecracker(_)));
        if !transparent || as_card.is_some() {
            r.target = match (as_card, letter, suit) {
                (Some(named), _, _) => match (natural_target(named), suit) {
                    (Target::French { face, .. }, Some(s)) => Target::French {
                        face,
                        suit: Some(s),
                    },
                    (t, _) => t,
                },
                (None, Some(l), _) => Target::Letter(l),
                (None, None, Some(s)) => Target::French {
                    face: Some(card.face()),
                    suit: Some(s),
                },
                (None, None, None) => natural_target(card),
            };
            r.on_target = book.playable_on(r.target);
        }
        let left = r.hands[seat].len();
        r.announced[seat] = announce && left == 1;
        r.window = (left == 1 && !announce).then_some(seat);
        r.idle = 0;
        if r.current == Some(seat) {
            r.acted = true;
        }
    }

    /// `cards_drawn`.
    pub(crate) fn cards_drawn(&mut self, seat: Seat, cards: &[Card], reason: DrawReason) {
        let r = self;
        let left = r.stock.len().saturating_sub(cards.len());
        r.stock.truncate(left);
        r.hands[seat].extend_from_slice(cards);
        r.held[seat] = r.held[seat].union(CardSet::holding(cards));
        if !cards.is_empty() {
            r.announced[seat] = false;
            r.idle = 0;
        }
        // A draw by the seat on turn is a move: it closes the challenge window.
        if reason != DrawReason::Challenge && r.current == Some(seat) {
            r.window = None;
            r.acted = true;
            if reason == DrawReason::Draw && cards.is_empty() {
                r.idle += 1;
            }
        }
    }

    /// `turn_started`.
    pub(crate) fn turn_started(&mut self, seat: Seat, pending: Pending, frozen: bool) {
        let r = self;
        if let Some(cur) = r.current {
            if cur != seat {
                if r.acted {
                    if let Some(played) = r.played_a_turn.get_mut(cur) {
                        *played = true;
                    }
                }
                r.acted = false;
            }
        }
        r.current = Some(seat);
        r.pending = pending;
        r.frozen = frozen;
    }
}

impl Game {
    /// A game for `seats` players under validated rules.
    pub fn new(rules: Rules, seats: usize) -> Result<Game, RulesError> {
        let book = rules.compile()?;
        if seats < rules.players.min || seats > rules.players.max {
            return Err(RulesError::Invalid(format!(
                "these rules take {} to {} players, not {seats}",
                rules.players.min, rules.players.max
            )));
        }
        Ok(Game {
            deck_id: DeckId::of(rules.deck, rules.decks.count(seats)),
            rules: Arc::new(rules),
            book: Arc::new(book),
            seats,
            clients: Vec::new(),
            totals: vec![0; seats],
            history: Vec::new(),
            round: None,
            result: None,
        })
    }

    /// Rebuilds a game by folding its events.
    pub fn from_events<'a>(
        rules: Rules,
        seats: usize,
        events: impl IntoIterator<Item = &'a Event>,
    ) -> Result<Game, RulesError> {
        let mut g = Game::new(rules, seats)?;
        for e in events {
            g.evolve(e);
        }
        Ok(g)
    }

    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    pub fn seats(&self) -> usize {
        self.seats
    }

    pub fn totals(&self) -> &[i32] {
        &self.totals
    }

    /// The finished rounds.
    pub fn history(&self) -> &[RoundEnded] {
        &self.history
    }

    /// The current round, or the last one once the game is over.
    pub fn round(&self) -> Option<&Round> {
        self.round.as_ref()
    }

    pub fn result(&self) -> Option<&GameEnded> {
        self.result.as_ref()
    }

    pub fn status(&self) -> Status {
        match (&self.round, &self.result) {
            (_, Some(_)) => Status::Finished,
            (None, None) => Status::Waiting,
            (Some(_), None) => Status::Playing,
        }
    }

    /// The effect of a card under these rules.
    pub fn effect(&self, card: Card) -> Option<Effect> {
        self.book.effect(card)
    }

    /// The points a card is worth in hand.
    pub fn points(&self, card: Card) -> i32 {
        self.book.points(card)
    }

    /// Applies one event. Never fails: events are facts.
    pub fn evolve(&mut self, event: &Event) {
        match event {
            Event::RoundStarted(rs) => {
                let mut hands = vec![Vec::new(); self.seats];
                for (seat, cards) in &rs.hands {
                    if let Some(h) = hands.get_mut(*seat) {
                        // Room for the draws to come.
                        *h = Vec::with_capacity(cards.len() + 8);
                        h.extend_from_slice(cards);
                    }
                }
                let size = hands.iter().map(Vec::len).sum::<usize>() + rs.stock.len() + 1;
                self.round = Some(Round {
                    number: rs.round,
                    dealer: rs.dealer,
                    deck: rs.deck.clone(),
                    stock: rs.stock.clone(),
                    // Room for every card of the round, so that plays never grow it.
                    discard: {
                        let mut discard = Vec::with_capacity(size);
                        discard.push(rs.starter);
                        discard
                    },
                    target: natural_target(rs.starter),
                    on_target: self.book.playable_on(natural_target(rs.starter)),
                    direction: Direction::Clockwise,
                    current: Some(rs.first_seat.min(self.seats - 1)),
                    pending: Pending::None,
                    frozen: false,
                    announced: vec![false; self.seats],
                    window: None,
                    owed_skips: vec![0; self.seats],
                    played_a_turn: vec![false; self.seats],
                    acted: false,
                    out: Vec::new(),
                    idle: 0,
                    reshuffles: 0,
                    size,
                    held: hands.iter().map(|h| CardSet::holding(h)).collect(),
                    repeated: repeated(&hands, &rs.stock, rs.starter),
                    hands,
                });
            }
            Event::GameEnded(ge) => self.result = Some((**ge).clone()),
            Event::RoundEnded(re) => {
                for (seat, total) in &re.totals {
                    if let Some(t) = self.totals.get_mut(*seat) {
                        *t = *total;
                    }
                }
                self.history.push((**re).clone());
                if let Some(r) = self.round.as_mut() {
                    r.current = None;
                    r.pending = Pending::None;
                    r.window = None;
                }
            }
            other => {
                if let Some(r) = self.round.as_mut() {
                    evolve_round(r, &self.book, other);
                }
            }
        }
    }
}

/// What a card asks of the next one when it is played without a choice.
pub(crate) fn natural_target(card: Card) -> Target {
    match card {
        Card::French(r, s) => Target::French {
            face: Some(Face::Rank(r)),
            suit: Some(s),
        },
        Card::Letter(l) => Target::Letter(l),
        Card::Joker | Card::Star | Card::Bang => Target::Any,
    }
}

/// D30: how many cards stay on the discard pile when it is recycled: the top,
/// and when the top is transparent (a firecracker), the cards beneath it down
/// to the first that is not.
pub(crate) fn kept_on_top(discard: &[Card], book: &Book) -> usize {
    let mut keep = 0;
    for c in discard.iter().rev() {
        keep += 1;
        if !matches!(book.effect(*c), Some(Effect::Firecracker(_))) {
            break;
        }
    }
    keep.max(1).min(discard.len())
}

/// The cards a deal holds more than one of.
fn repeated(hands: &[Vec<Card>], stock: &[Card], starter: Card) -> CardSet {
    let mut seen = CardSet::of(starter);
    let mut repeated = CardSet::EMPTY;
    for cards in hands.iter().map(Vec::as_slice).chain([stock]) {
        for &card in cards {
            let one = CardSet::of(card);
            if seen.and(one).is_empty() {
                seen = seen.union(one);
            } else {
                repeated = repeated.union(one);
            }
        }
    }
    repeated
}

fn take_from_hand(hand: &mut Vec<Card>, card: Card) {
    if let Some(i) = hand.iter().position(|c| *c == card) {
        hand.remove(i);
    }
}

fn evolve_round(r: &mut Round, book: &Book, event: &Event) {
    // Events come from `decide`; a log edited by hand may name a seat the
    // table does not have. Such an event changes nothing rather than panic.
    let n = r.hands.len();
    let bad_seat = match event {
        Event::CardPlayed(p) => p.seat >= n,
        Event::CardsDrawn { seat, .. }
        | Event::TurnPassed { seat }
        | Event::TurnSkipped { seat, .. }
        | Event::TurnStarted { seat, .. }
        | Event::PlayerWentOut { seat, .. } => *seat >= n,
        Event::Challenged { by, seat, .. } => *by >= n || *seat >= n,
        _ => false,
    };
    if bad_seat {
        return;
    }
    match event {
        Event::CardTurned { card } => {
            r.stock.pop();
            r.discard.push(*card);
            r.target = natural_target(*card);
            r.on_target = book.playable_on(r.target);
        }
        Event::CardPlayed(played) => r.card_played(book, played),
        Event::CardsDrawn {
            seat,
            cards,
            reason,
        } => r.cards_drawn(*seat, cards, *reason),
        Event::StockReshuffled { stock } => {
            let keep = kept_on_top(&r.discard, book);
            let cut = r.discard.len() - keep;
            r.discard.drain(..cut);
            r.stock.clone_from(stock);
            r.reshuffles += 1;
        }
        Event::TurnPassed { seat } => {
            r.window = None;
            if r.current == Some(*seat) {
                r.acted = true;
            }
        }
        Event::Challenged {
            seat, loses_turn, ..
        } => {
            r.window = None;
            if *loses_turn {
                r.owed_skips[*seat] += 1;
            }
        }
        Event::DirectionChanged { direction } => r.direction = *direction,
        Event::TurnSkipped { seat, reason } => {
            if *reason == SkipReason::Challenge {
                r.owed_skips[*seat] = r.owed_skips[*seat].saturating_sub(1);
            }
        }
        Event::TurnStarted {
            seat,
            pending,
            frozen,
        } => r.turn_started(*seat, *pending, *frozen),
        Event::PlayerWentOut { seat, .. } => {
            if !r.out.contains(seat) {
                r.out.push(*seat);
            }
        }
        Event::RoundStarted(_) | Event::RoundEnded(_) | Event::GameEnded(_) => {}
    }
}
