-- Ratings and statistics per account and ruleset (docs/API.md "Finding a
-- game and coming back"): derived from the finished games between people,
-- written by the transaction that appends a game's end, and recomputable
-- from the logs alone (`huit ratings rebuild`).
--
-- Games are folded in the order they ended: their `game_ended` event's `at`,
-- then the table's id. Games of one ruleset are rated one at a time (a
-- transaction-level advisory lock per ruleset); one that commits after a
-- game that ended later than it re-rates that later game too, so the
-- stored values are always those of that order.

-- A rated game: which ruleset, and where it stands in the order.
CREATE TABLE rated_games (
    table_id uuid        PRIMARY KEY REFERENCES game_tables (id),
    ruleset  text        NOT NULL,
    ended_at timestamptz NOT NULL
);
CREATE INDEX rated_games_order_idx ON rated_games (ruleset, ended_at, table_id);

-- What each person took from a rated game, and their rating before and
-- after it (the game's order key is repeated here for the look-ups by
-- account).
CREATE TABLE rated_results (
    table_id     uuid        NOT NULL REFERENCES rated_games (table_id),
    account_id   uuid        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    ruleset      text        NOT NULL,
    ended_at     timestamptz NOT NULL,
    seat         integer     NOT NULL CONSTRAINT rated_results_seat_nonneg CHECK (seat >= 0),
    place        integer     NOT NULL CONSTRAINT rated_results_place_positive CHECK (place >= 1),
    total        integer     NOT NULL,
    won          boolean     NOT NULL,
    mu_before    float8      NOT NULL,
    sigma_before float8      NOT NULL,
    mu_after     float8      NOT NULL,
    sigma_after  float8      NOT NULL,
    PRIMARY KEY (table_id, account_id)
);
-- An account's rating at a point of its ruleset's order (the last result
-- before it).
CREATE INDEX rated_results_standing_idx
    ON rated_results (account_id, ruleset, ended_at DESC, table_id DESC);
-- An account's last games, every ruleset.
CREATE INDEX rated_results_recent_idx ON rated_results (account_id, ended_at DESC, table_id DESC);

-- An account's standing in a ruleset: its rating (μ, σ) after its last
-- rated game, and its counts.
CREATE TABLE ratings (
    account_id uuid   NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    ruleset    text   NOT NULL,
    mu         float8 NOT NULL,
    sigma      float8 NOT NULL,
    games      bigint NOT NULL CONSTRAINT ratings_games_nonneg CHECK (games >= 0),
    wins       bigint NOT NULL CONSTRAINT ratings_wins_valid CHECK (wins BETWEEN 0 AND games),
    -- The sum of the places taken (the average place is places / games).
    places     bigint NOT NULL,
    -- The sum of the final totals.
    points     bigint NOT NULL,
    PRIMARY KEY (account_id, ruleset)
);
-- The leaderboards: established ratings only (σ ≤ 6, docs/API.md, the
-- engine's PROVISIONAL_ABOVE), best first; a page is a range of this index
-- from the cursor on (both columns descending, so that the cursor is one
-- row comparison).
CREATE INDEX ratings_board_idx ON ratings (ruleset, mu DESC, account_id DESC) WHERE sigma <= 6;
