//! Ratings and statistics per ruleset (docs/API.md "Finding a game and
//! coming back"): which games count, what each person takes from one, and
//! Weng-Lin's Bayesian rating with the Bradley-Terry full-pairing update
//! (the `skillratings` crate's `weng_lin_multi_team`). Everything here is a
//! pure function of the finished games, so that anyone holding the logs
//! recomputes the same numbers, bit for bit, by folding the games in the
//! order they ended ([`Standings`]).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use skillratings::weng_lin::{weng_lin_multi_team, WengLinConfig, WengLinRating};
use skillratings::MultiTeamOutcome;

use crate::event::{GameEnded, Seat};
use crate::table::{Actors, PlayerId, ResultCorrected, Seated, Table, TableEvent};
use crate::Event;

/// A rating is provisional while its deviation is above this.
pub const PROVISIONAL_ABOVE: f64 = 6.0;

/// The contract's parameters: β 25/6 (a skill class), κ 1e-6 (the floor of
/// a deviation's shrinking); a new player starts at μ 25, σ 25/3.
const CONFIG: WengLinConfig = WengLinConfig {
    beta: 25.0 / 6.0,
    uncertainty_tolerance: 1e-6,
};

/// A person's skill in one ruleset: `mu` the estimate, `sigma` how unsure
/// it still is.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    pub mu: f64,
    pub sigma: f64,
}

impl Rating {
    /// Before any rated game.
    pub const NEW: Rating = Rating {
        mu: 25.0,
        sigma: 25.0 / 3.0,
    };

    /// Too few games yet to say much (σ > [`PROVISIONAL_ABOVE`]).
    pub fn provisional(self) -> bool {
        self.sigma > PROVISIONAL_ABOVE
    }
}

impl Default for Rating {
    fn default() -> Self {
        Rating::NEW
    }
}

/// What one person took from a rated game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finish {
    pub player: PlayerId,
    /// 1 is best; tied players share the place (D21).
    pub place: usize,
    /// Their total at the end.
    pub total: i32,
    /// Among the game's winners.
    pub won: bool,
}

/// A finished game between people: the games that ratings and statistics
/// count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RatedGame {
    pub ruleset: String,
    /// By seat.
    pub finishes: Vec<Finish>,
}

impl RatedGame {
    /// The rule of what counts (D43): a game of `ruleset` between `players`
    /// (its seats when it started) that `ended` (by its end condition or by
    /// resignations: as its ranking says) is rated when every seat is a
    /// person's, each a different account, and every one of them `played`:
    /// made a move of their own in it (a play, a draw on their turn, a pass
    /// or a challenge; not a timeout's move, nor one the server made for
    /// their seat while they were away or after they resigned). A game with
    /// a bot seat, or a guest's, is not; an aborted game never ends, and is
    /// not either.
    pub fn of<'a>(
        ruleset: &str,
        players: impl IntoIterator<Item = &'a Seated>,
        played: impl Fn(Seat) -> bool,
        ended: &GameEnded,
    ) -> Option<RatedGame> {
        let players: Vec<&Seated> = players.into_iter().collect();
        if players.len() < 2
            || players
                .iter()
                .any(|p| p.bot.is_some() || p.guest || !played(p.seat))
        {
            return None;
        }
        let mut finishes = Vec::with_capacity(players.len());
        for p in &players {
            let placing = ended.ranking.iter().find(|r| r.seat == p.seat)?;
            if finishes.iter().any(|f: &Finish| f.player == p.account_id) {
                return None;
            }
            finishes.push(Finish {
                player: p.account_id.clone(),
                place: placing.place,
                total: placing.total,
                won: ended.winners.contains(&p.seat),
            });
        }
        Some(RatedGame {
            ruleset: ruleset.to_owned(),
            finishes,
        })
    }

    /// The rated game a table's whole log ends with, if any: its ruleset
    /// (`table_created`), its seats (`game_started`), who played in it (the
    /// acts of its game, as [`Actors`] reads them) and its end
    /// (`game_ended`), as [`RatedGame::of`] judges them.
    pub fn from_log<'a>(events: impl IntoIterator<Item = &'a TableEvent>) -> Option<RatedGame> {
        let (mut ruleset, mut players, mut ended, mut corrected) = (None, None, None, None);
        let (mut actors, mut played) = (Actors::default(), Vec::new());
        for event in events {
            if let Some(seat) = actors.note(event) {
                if let Some(p) = played.get_mut(seat) {
                    *p = true;
                }
            }
            match event {
                TableEvent::TableCreated(c) => ruleset = Some(&c.ruleset),
                TableEvent::GameStarted { players: p } => {
                    played = vec![false; p.len()];
                    players = Some(p);
                }
                TableEvent::Game(Event::GameEnded(e)) => ended = Some(e),
                TableEvent::ResultCorrected(c) => corrected = Some(&**c),
                _ => {}
            }
        }
        let played = |seat: Seat| played.get(seat).copied().unwrap_or(false);
        let counted = counted_result(ended?, corrected)?;
        RatedGame::of(ruleset?, players?, played, &counted)
    }

    /// The players' ratings after this game, from theirs before it (in the
    /// order of [`RatedGame::finishes`]): one-person teams ranked by place,
    /// ties sharing a rank.
    pub fn rate(&self, before: &[Rating]) -> Vec<Rating> {
        let teams: Vec<[WengLinRating; 1]> = before
            .iter()
            .map(|r| {
                [WengLinRating {
                    rating: r.mu,
                    uncertainty: r.sigma,
                }]
            })
            .collect();
        let ranked: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
            .iter()
            .zip(&self.finishes)
            .map(|(team, f)| (&team[..], MultiTeamOutcome::new(f.place)))
            .collect();
        weng_lin_multi_team(&ranked, &CONFIG)
            .into_iter()
            .map(|team| Rating {
                mu: team[0].rating,
                sigma: team[0].uncertainty,
            })
            .collect()
    }
}

/// The result a finished game counts by: as it `ended`, or as its last
/// correction ranks it (docs/API.md "Corrections and sanctions"); none
/// once that correction voided it.
fn counted_result(ended: &GameEnded, corrected: Option<&ResultCorrected>) -> Option<GameEnded> {
    match corrected {
        Some(c) if !c.rated => None,
        Some(c) => Some(c.result(ended.reason)),
        None => Some(ended.clone()),
    }
}

impl Table {
    /// The rated game this table's game ended as (see [`RatedGame::of`]).
    pub fn rated_game(&self, ended: &GameEnded) -> Option<RatedGame> {
        let played = |seat: Seat| self.presence.get(seat).is_some_and(|p| p.moved);
        RatedGame::of(&self.ruleset, self.players.iter().flatten(), played, ended)
    }

    /// The rated game this table's finished game counts as now, its last
    /// correction's say included (the log's judgement, [`RatedGame::from_log`]).
    pub fn rated_now(&self) -> Option<RatedGame> {
        let ended = self.game.as_ref()?.result()?;
        self.rated_game(&counted_result(ended, self.correction.as_ref())?)
    }
}

/// One account's counts in one ruleset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    pub games: u64,
    pub wins: u64,
    /// The sum of the places taken (the average is this over `games`).
    pub places: u64,
    /// The sum of the final totals.
    pub points: i64,
}

impl Stats {
    /// Counts one more game.
    pub fn add(&mut self, finish: &Finish) {
        self.games += 1;
        self.wins += u64::from(finish.won);
        self.places += finish.place as u64;
        self.points += i64::from(finish.total);
    }

    /// The average place, 1 being always first (none before a game).
    pub fn average_place(&self) -> Option<f64> {
        (self.games > 0).then(|| self.places as f64 / self.games as f64)
    }
}

/// An account's standing in one ruleset: its rating and its counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Standing {
    pub rating: Rating,
    pub stats: Stats,
}

/// Every standing, made by folding rated games in the order they ended:
/// what the server keeps, and what anyone recomputes from the logs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Standings {
    /// By (account, ruleset).
    pub by_player: HashMap<(PlayerId, String), Standing>,
}

impl Standings {
    /// The standing of `player` in `ruleset` (a new one before any game).
    pub fn of(&self, player: &PlayerId, ruleset: &str) -> Standing {
        self.by_player
            .get(&(player.clone(), ruleset.to_owned()))
            .copied()
            .unwrap_or_default()
    }

    /// Takes the next game to have ended; the players' ratings before and
    /// after it, in the order of its finishes.
    pub fn add(&mut self, game: &RatedGame) -> Vec<(Rating, Rating)> {
        let before: Vec<Rating> = game
            .finishes
            .iter()
            .map(|f| self.of(&f.player, &game.ruleset).rating)
            .collect();
        let after = game.rate(&before);
        for (f, rating) in game.finishes.iter().zip(&after) {
            let key = (f.player.clone(), game.ruleset.clone());
            let standing = self.by_player.entry(key).or_default();
            standing.rating = *rating;
            standing.stats.add(f);
        }
        before.into_iter().zip(after).collect()
    }
}

#[cfg(test)]
mod table_tests;
#[cfg(test)]
mod tests;
