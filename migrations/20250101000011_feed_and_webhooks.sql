-- A player's feed (docs/API.md "Finding a game and coming back": `GET
-- /v1/me/feed`) and the outbox of its webhooks: one row per notice, written
-- by the statement that appends the events that cause it (or, for
-- `turn_ending`, by the statement that fires the turn's alarm).
--
-- Its id orders an account's feed in commit order: items are written by
-- `feed_write` (below) alone, which takes each account's feed lock before
-- their ids are drawn, so a reader who has seen item n of an account never
-- later finds an item below n committed.
CREATE TABLE feed_items (
    id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id      uuid        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    kind            text        NOT NULL CONSTRAINT feed_items_kind_valid
                                CHECK (kind IN ('your_turn', 'turn_ending', 'game_started',
                                                'game_over', 'rematch_offered')),
    table_id        uuid        NOT NULL,
    at              timestamptz NOT NULL,
    deadline        timestamptz,
    my_turn         integer     NOT NULL,
    -- The webhook's outbox: null when no webhook URL was set when the item
    -- was written; else pending until delivered or failed.
    delivery        text        CONSTRAINT feed_items_delivery_valid
                                CHECK (delivery IN ('pending', 'delivered', 'failed')),
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    last_error      text,
    delivered_at    timestamptz
);
CREATE INDEX feed_items_account_idx ON feed_items (account_id, id);
-- The deliveries still to make, each account's oldest first.
CREATE INDEX feed_items_pending_idx ON feed_items (account_id, id) WHERE delivery = 'pending';
CREATE INDEX feed_items_failed_idx ON feed_items (id) WHERE delivery = 'failed';
-- Pruning by age: the rows are written in time order, so a BRIN index
-- finds the old ones for almost nothing per insert.
CREATE INDEX feed_items_at_idx ON feed_items USING brin (at);

-- When the player on turn is told their time is almost up (80 % of the
-- turn's clock, `domain::Table::turn_ending_after`), set like `due_at` by the
-- statement that appends the events; cleared by the statement that fires it,
-- so it fires once, by any process.
ALTER TABLE game_tables ADD COLUMN turn_ending_at timestamptz;
CREATE INDEX game_tables_turn_ending_idx ON game_tables (turn_ending_at)
    WHERE turn_ending_at IS NOT NULL;

-- A webhook URL that answered 410 Gone: no delivery is made to it until an
-- admin resumes it.
CREATE TABLE webhook_endpoints (
    url       text        PRIMARY KEY,
    paused_at timestamptz
);

-- Admins' webhook actions are recorded like the others.
ALTER TABLE admin_actions ADD COLUMN feed_item_id bigint;
ALTER TABLE admin_actions DROP CONSTRAINT admin_actions_action_valid;
ALTER TABLE admin_actions ADD CONSTRAINT admin_actions_action_valid
    CHECK (action IN ('resolve_dispute', 'replay_running_round', 'export_log', 'audit',
                      'retry_webhook', 'resume_webhooks'));

-- How many tables wait for an account (its badge), leaving out the tables
-- of `except_tables` (those a statement is moving, counted by it): one
-- place for `GET /v1/me/tables` and for every feed item's `my_turn`.
CREATE FUNCTION tables_waiting_for(account uuid, except_tables uuid[]) RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT count(*)
    FROM table_players p JOIN game_tables g ON g.id = p.table_id
    WHERE p.account_id = account AND g.turn_account = account
      AND g.id <> ALL (except_tables)
$$;

-- Writes feed items, the one way they are written: first each account's
-- feed lock (a transaction-level advisory lock, class 8, key
-- hashtext(account id)), the keys in order so that two writers never wait
-- for each other, then the items in the order given, their ids drawn under
-- the locks. An advisory lock rather than a row's: it writes nothing, and
-- the bot caps' count, which locks the account's row in a transaction that
-- may then append to a table, cannot wait for it in turn. `outbox`: the
-- items are to be delivered as webhooks too (written `pending`).
CREATE FUNCTION feed_write(accounts uuid[], kinds text[], tables uuid[], ats timestamptz[],
                           deadlines timestamptz[], my_turns bigint[], outbox boolean)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    written bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(8, k.key)
    FROM (SELECT DISTINCT hashtext(a::text) AS key FROM unnest(accounts) AS a ORDER BY 1) k;
    INSERT INTO feed_items (account_id, kind, table_id, at, deadline, my_turn,
                            delivery, next_attempt_at)
    SELECT i.account, i.kind, i.table_id, i.at, i.deadline, i.my_turn,
           CASE WHEN outbox THEN 'pending' END, CASE WHEN outbox THEN i.at END
    FROM unnest(accounts, kinds, tables, ats, deadlines, my_turns) WITH ORDINALITY
         AS i(account, kind, table_id, at, deadline, my_turn, ord)
    ORDER BY i.ord;
    GET DIAGNOSTICS written = ROW_COUNT;
    RETURN written;
END
$$;
