-- Finding a game (docs/API.md "Finding a game and coming back"). The log
-- says how a table fills (its `table_created`: visibility, starting by
-- itself, quick play's bots, the rematch it follows); these columns are
-- what the lobby looks tables up by.
--
-- `invite_code`: a private table's invitation, shown to its creator and
-- never written in the log; `invite_digest`, its SHA-256, is what a join
-- looks up (the code itself is then compared in constant time), and a
-- renewed code replaces both, so the old one stops working at once.
--
-- `quickplay_key`: the SHA-256 of a quick-play table's settings (rule set,
-- rules, seats, clock, bots_after); `quickplay_open`: the same key while
-- the table is open to quick play (waiting, a person seated), kept by the
-- transaction that appends its lobby events. Its unique index is what
-- makes quick play safe across processes: at most one open table per
-- settings, so two callers that both find none cannot both open one (the
-- second insert is refused, and that caller joins the first's table).
ALTER TABLE game_tables
    ADD COLUMN visibility text NOT NULL DEFAULT 'public'
        CONSTRAINT game_tables_visibility_valid CHECK (visibility IN ('public', 'private')),
    ADD COLUMN invite_code text,
    ADD COLUMN invite_digest bytea,
    ADD COLUMN quickplay_key text,
    ADD COLUMN quickplay_open text,
    ADD CONSTRAINT game_tables_invite_private
        CHECK ((invite_code IS NOT NULL) = (visibility = 'private')
               AND (invite_digest IS NOT NULL) = (visibility = 'private')),
    ADD CONSTRAINT game_tables_quickplay_open_own
        CHECK (quickplay_open IS NULL OR quickplay_open = quickplay_key);

CREATE UNIQUE INDEX game_tables_invite_digest_key ON game_tables (invite_digest)
    WHERE invite_digest IS NOT NULL;
CREATE UNIQUE INDEX game_tables_quickplay_open_key ON game_tables (quickplay_open)
    WHERE quickplay_open IS NOT NULL;
CREATE INDEX game_tables_quickplay_key_idx ON game_tables (quickplay_key)
    WHERE quickplay_key IS NOT NULL AND status = 'waiting';
