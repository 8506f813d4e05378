-- The account each table waits for (docs/API.md "Finding a game and coming
-- back": `GET /v1/me/tables?turn=mine`): the player of the seat on turn,
-- unless the server plays it. Set by the statement that appends the events
-- that make it so, like `due_at`; the index serves a player's tables on
-- turn, soonest deadline first (no deadline last: the year 9999), without
-- reading a log.
ALTER TABLE game_tables ADD COLUMN turn_account uuid;
CREATE INDEX game_tables_turn_idx
    ON game_tables (turn_account, (COALESCE(due_at, '9999-12-31 00:00:00+00'::timestamptz)), id)
    WHERE turn_account IS NOT NULL;
