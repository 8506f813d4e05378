-- Keeping tables moving (docs/RULES.md §7): when the server must next act on
-- a table by itself (a turn's deadline, D37; the move of an away, resigned
-- or bot seat, D39-D42). Set by the same statement as the events that make
-- it so; any server process fires a due one with an ordinary append at the
-- table's version, so a move that came first wins and a firing happens once.
ALTER TABLE game_tables ADD COLUMN due_at timestamptz;
CREATE INDEX game_tables_due_idx ON game_tables (due_at) WHERE due_at IS NOT NULL;

-- D41: a game ended before every person had moved.
ALTER TABLE game_tables DROP CONSTRAINT game_tables_status_valid;
ALTER TABLE game_tables ADD CONSTRAINT game_tables_status_valid
    CHECK (status IN ('waiting', 'playing', 'finished', 'aborted'));
