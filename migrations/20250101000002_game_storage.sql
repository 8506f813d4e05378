-- Event-sourced game storage. `events` is the source of truth; `game_tables`
-- is a projection (one row per table) kept up to date in the same transaction.

CREATE TABLE game_tables (
    id          uuid        PRIMARY KEY,
    ruleset     text        NOT NULL,
    status      text        NOT NULL DEFAULT 'waiting'
                CONSTRAINT game_tables_status_valid CHECK (status IN ('waiting', 'playing', 'finished')),
    -- seq of the last event of the table (0: no event yet).
    version     bigint      NOT NULL DEFAULT 0 CONSTRAINT game_tables_version_nonneg CHECK (version >= 0),
    created_by  uuid        NOT NULL REFERENCES accounts (id),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    -- Cached state for fast reads (phase 2); always rebuildable from events.
    snapshot    jsonb
);

CREATE INDEX game_tables_status_idx ON game_tables (status, created_at);
CREATE INDEX game_tables_created_by_idx ON game_tables (created_by);

-- The primary key (table_id, seq) is the optimistic lock: two writers that
-- both append seq N+1 collide on it, and the second gets a unique violation.
CREATE TABLE events (
    table_id  uuid        NOT NULL REFERENCES game_tables (id),
    seq       bigint      NOT NULL CONSTRAINT events_seq_positive CHECK (seq >= 1),
    type      text        NOT NULL,
    v         integer     NOT NULL CONSTRAINT events_v_positive CHECK (v >= 1),
    at        timestamptz NOT NULL,
    data      jsonb       NOT NULL,
    prev_hash text        NOT NULL CONSTRAINT events_prev_hash_hex CHECK (prev_hash ~ '^[0-9a-f]{64}$'),
    hash      text        NOT NULL CONSTRAINT events_hash_hex CHECK (hash ~ '^[0-9a-f]{64}$'),
    CONSTRAINT events_pkey PRIMARY KEY (table_id, seq)
);

-- The log is append-only: no UPDATE, no DELETE (TRUNCATE is refused too).
CREATE FUNCTION events_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events are append-only: % refused', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER events_append_only
    BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION events_refuse_change();

CREATE TRIGGER events_no_truncate
    BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_refuse_change();

-- Idempotency keys of moves: the same (table, account, key) with the same
-- request body replays the stored answer; with another body it is refused.
CREATE TABLE idempotency_keys (
    table_id        uuid        NOT NULL REFERENCES game_tables (id),
    account_id      uuid        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    key             text        NOT NULL CONSTRAINT idempotency_keys_key_length CHECK (length(key) BETWEEN 1 AND 255),
    request_hash    text        NOT NULL,
    response_status smallint    NOT NULL,
    response_body   jsonb       NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT idempotency_keys_pkey PRIMARY KEY (table_id, account_id, key)
);
