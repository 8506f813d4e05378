-- The bots a table seats (docs/API.md "Keeping tables moving"), projected
-- from its `bot_seated` events in the appending transaction: an account has
-- at most so many bots, and so many tables with a `strong` bot, running at
-- once. Bots are seated only while a table waits and never leave it.
ALTER TABLE game_tables
    ADD COLUMN bots        smallint NOT NULL DEFAULT 0 CONSTRAINT game_tables_bots_count CHECK (bots >= 0),
    ADD COLUMN strong_bots smallint NOT NULL DEFAULT 0 CONSTRAINT game_tables_strong_bots_count CHECK (strong_bots BETWEEN 0 AND bots);

UPDATE game_tables g
SET bots = b.bots, strong_bots = b.strong_bots
FROM (
    SELECT table_id,
           count(*) AS bots,
           count(*) FILTER (WHERE data->>'level' = 'strong') AS strong_bots
    FROM events WHERE type = 'bot_seated' GROUP BY table_id
) b
WHERE b.table_id = g.id;

CREATE INDEX game_tables_running_bots_idx ON game_tables (created_by)
    WHERE status = 'playing' AND bots > 0;

-- The audit of a table whose game is over, computed once and kept: its log
-- can no longer change, so the page of a dispute reads it instead of
-- replaying every bot's search again. `version` is the table's version it
-- was computed at.
CREATE TABLE kept_audits (
    table_id    uuid        PRIMARY KEY REFERENCES game_tables (id),
    version     bigint      NOT NULL,
    report      json        NOT NULL,
    computed_at timestamptz NOT NULL DEFAULT now()
);
