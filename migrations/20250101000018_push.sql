-- Push to phones (docs/API.md "Push to phones"): the outbox of pushes, one
-- row per feed item per device of its account, written by `feed_write` in
-- the transaction that writes the item (only for devices of a platform
-- this server pushes to: no row, and no cost, otherwise); sent by
-- `api::push` in any process, each device's in order, like the webhooks.
CREATE TABLE pushes (
    id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    device_id       uuid        NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    feed_item_id    bigint      NOT NULL REFERENCES feed_items (id) ON DELETE CASCADE,
    -- `skipped`: the player was watching the table (or their feed) when
    -- it was to be sent.
    status          text        NOT NULL DEFAULT 'pending' CONSTRAINT pushes_status_valid
                                CHECK (status IN ('pending', 'delivered', 'skipped', 'failed')),
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    last_error      text,
    delivered_at    timestamptz
);
-- The pushes still to send, each device's oldest first.
CREATE INDEX pushes_pending_idx ON pushes (device_id, id) WHERE status = 'pending';
CREATE INDEX pushes_failed_idx ON pushes (id) WHERE status = 'failed';
-- For the cascades: a device dropped, a feed item pruned.
CREATE INDEX pushes_device_idx ON pushes (device_id);
CREATE INDEX pushes_item_idx ON pushes (feed_item_id);

-- Who is following what now, across processes: a row per account and table
-- it has a view's long poll or stream open on (`table_id` the nil uuid for
-- its feed), kept by the process that holds it until `until` (the contract's
-- 10 s after it closes, and a refresh's period). Written only for accounts
-- with devices, and only when this server pushes. UNLOGGED: lost in a crash,
-- it costs at worst a push to a player who was looking.
CREATE UNLOGGED TABLE watching (
    account_id uuid        NOT NULL,
    table_id   uuid        NOT NULL,
    until      timestamptz NOT NULL,
    PRIMARY KEY (account_id, table_id)
);

-- Whether account `follower` follows table `followed` (or its feed) now: the one reading
-- of `watching`, for `feed_write` (no push is written) and the sender (a
-- push is skipped). Inlined by the planner.
CREATE FUNCTION follows(follower uuid, followed uuid) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM watching w
                   WHERE w.account_id = follower
                     AND w.table_id IN (followed, '00000000-0000-0000-0000-000000000000')
                     AND w.until > now())
$$;

-- Admins' push actions are recorded like the others.
ALTER TABLE admin_actions ADD COLUMN push_id bigint;
ALTER TABLE admin_actions DROP CONSTRAINT admin_actions_action_valid;
ALTER TABLE admin_actions ADD CONSTRAINT admin_actions_action_valid
    CHECK (action IN ('resolve_dispute', 'replay_running_round', 'export_log', 'audit',
                      'retry_webhook', 'resume_webhooks', 'erase_account', 'correct_result',
                      'sanction_account', 'lift_sanction', 'retry_push'));

-- `feed_write` as before (migration 11), and the items' pushes to the
-- devices of their accounts whose platform is among `platforms`, in the
-- items' order: under the same feed locks, so that a device's pushes are
-- in its account's commit order too. An item whose player follows its
-- table or their feed now (`watching`) is pushed to no device: nothing is
-- written for it (the sender checks again when it sends). No platforms:
-- the pushes' part is not run at all (a one-time filter).
DROP FUNCTION feed_write(uuid[], text[], uuid[], timestamptz[], timestamptz[], bigint[], boolean);
CREATE FUNCTION feed_write(accounts uuid[], kinds text[], tables uuid[], ats timestamptz[],
                           deadlines timestamptz[], my_turns bigint[], outbox boolean,
                           platforms text[])
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
          AND NOT follows(i.account_id, i.table_id)
        ORDER BY i.id, d.id
        -- A device its platform called dead may be dropped meanwhile: it is
        -- skipped (not a failed foreign key, which would fail the move).
        FOR KEY SHARE OF d
    )
    SELECT count(*) INTO written FROM items;
    RETURN written;
END
$$;
