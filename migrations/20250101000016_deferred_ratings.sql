-- Ratings never hold a move back (docs/API.md "Corrections and
-- sanctions"): a game that ends while its ruleset's ratings are being
-- recomputed (a correction re-rating many later games, a rebuild) is not
-- rated in the move's transaction, which would wait for them; it is noted
-- here, in that transaction, and rated by the next pass of the rater, in
-- its place in the ruleset's order.
CREATE TABLE ratings_deferred (
    table_id uuid        PRIMARY KEY REFERENCES game_tables (id),
    ruleset  text        NOT NULL,
    noted_at timestamptz NOT NULL DEFAULT now()
);
