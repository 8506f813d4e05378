-- What a move costs PostgreSQL (BENCHMARKS.md, twenty-seventh pass).
--
-- A scalar SQL function whose body reads a table (a FROM, or a sublink) is
-- never inlined; it is parsed and planned once per statement, and started
-- and ended once per call. `tables_waiting_for`, called for every feed
-- item, was a fifth of PostgreSQL's CPU under load. Both such functions
-- become set-returning SQL functions, which the planner inlines where they
-- are called from a FROM list, into the calling statement's own (cached)
-- plan; what they compute is unchanged.

-- How many tables wait for `account` (its badge), leaving out the tables of
-- `except_tables` (those a statement is moving, counted by it): one row,
-- `n`. Called as `FROM tables_waiting_for(...)` (or `LATERAL`).
DROP FUNCTION tables_waiting_for(uuid, uuid[]);
CREATE FUNCTION tables_waiting_for(account uuid, except_tables uuid[])
RETURNS TABLE (n bigint) LANGUAGE sql STABLE AS $$
    SELECT count(*)
    FROM table_players p JOIN game_tables g ON g.id = p.table_id
    WHERE p.account_id = account AND g.turn_account = account
      AND g.id <> ALL (except_tables)
$$;

-- The rows of `watching` by which account `follower` follows table
-- `followed` (or its feed) now: the one reading of `watching`, for
-- `feed_write` (no push is written) and the sender (a push is skipped).
-- Called as `EXISTS (SELECT FROM following(...))`.
DROP FUNCTION follows(uuid, uuid);
CREATE FUNCTION following(follower uuid, followed uuid)
RETURNS SETOF watching LANGUAGE sql STABLE AS $$
    SELECT * FROM watching w
    WHERE w.account_id = follower
      AND w.table_id IN (followed, '00000000-0000-0000-0000-000000000000')
      AND w.until > now()
$$;

-- `feed_write` as in migration 18, reading `following`.
CREATE OR REPLACE FUNCTION feed_write(accounts uuid[], kinds text[], tables uuid[],
                                      ats timestamptz[], deadlines timestamptz[],
                                      my_turns bigint[], outbox boolean, platforms text[])
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    written bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(8, k.key)
    FROM (SELECT DISTINCT hashtext(a::text) AS key FROM unnest(accounts) AS a ORDER BY 1) k;
    WITH items AS (
        INSERT INTO feed_items (account_id, kind, table_id, at, deadline, my_turn,
                                delivery, next_attempt_at)
        SELECT i.account, i.kind, i.table_id, i.at, i.deadline, i.my_turn,
               CASE WHEN outbox THEN 'pending' END, CASE WHEN outbox THEN i.at END
        FROM unnest(accounts, kinds, tables, ats, deadlines, my_turns) WITH ORDINALITY
             AS i(account, kind, table_id, at, deadline, my_turn, ord)
        ORDER BY i.ord
        RETURNING id, account_id, table_id, at
    ), pushed AS (
        INSERT INTO pushes (device_id, feed_item_id, next_attempt_at)
        SELECT d.id, i.id, i.at
        FROM items i JOIN devices d ON d.account_id = i.account_id
        WHERE cardinality(platforms) > 0 AND d.platform = ANY (platforms)
          AND NOT EXISTS (SELECT FROM following(i.account_id, i.table_id))
        ORDER BY i.id, d.id
        -- A device its platform called dead may be dropped meanwhile: it is
        -- skipped (not a failed foreign key, which would fail the move).
        FOR KEY SHARE OF d
    )
    SELECT count(*) INTO written FROM items;
    RETURN written;
END
$$;

-- The log's events need no foreign key to their table: the one statement
-- that appends them (`store::events::insert_batch`, and `insert_one` through
-- it) inserts only the events of the `game_tables` rows it has just moved
-- from their expected version, so each event's table exists, and a table
-- is never deleted (no statement deletes from `game_tables`, and its events
-- could not go with it: the log refuses deletes). The check it made, a
-- lookup of the table's row per event, was about 7 % of PostgreSQL's CPU per
-- move.
ALTER TABLE events DROP CONSTRAINT events_table_id_fkey;
