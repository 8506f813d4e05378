-- Accounts an app store accepts: deletion with a grace period, erasure,
-- guests, and the sessions a player sees and revokes.
--
-- An erased account keeps its row and random id, which logs and results
-- still name (nobody, once the row is nameless): no name, no password,
-- `erased_at` set. The name is free again at once (the unique index is on
-- the names there are).

ALTER TABLE accounts
    ALTER COLUMN username DROP NOT NULL,
    ALTER COLUMN password_hash DROP NOT NULL,
    DROP CONSTRAINT accounts_role_valid,
    ADD CONSTRAINT accounts_role_valid CHECK (role IN ('player', 'admin', 'guest')),
    -- Deletion asked: erased then, unless a log-in cancels it first.
    ADD COLUMN erase_at timestamptz,
    -- Erased: nothing left but the id.
    ADD COLUMN erased_at timestamptz,
    ADD CONSTRAINT accounts_erased_is_nameless
        CHECK (erased_at IS NULL OR (username IS NULL AND password_hash IS NULL)),
    ADD CONSTRAINT accounts_named_until_erased
        CHECK (erased_at IS NOT NULL OR username IS NOT NULL),
    -- A guest has no password; every other living account has one.
    ADD CONSTRAINT accounts_password_unless_guest
        CHECK (erased_at IS NOT NULL OR role = 'guest' OR password_hash IS NOT NULL);

-- The eraser's queue: accounts whose deletion is due.
CREATE INDEX accounts_erase_at_idx ON accounts (erase_at)
    WHERE erase_at IS NOT NULL AND erased_at IS NULL;

-- Idle guests are found by their sessions' last use.
CREATE INDEX accounts_guests_idx ON accounts (created_at)
    WHERE role = 'guest' AND erased_at IS NULL;

ALTER TABLE sessions
    -- Moved when the session is used, at most once a minute.
    ADD COLUMN last_used_at timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN user_agent text
        CONSTRAINT sessions_user_agent_length CHECK (length(user_agent) <= 256);

-- One-time rewrites of the logs, done once each (`store::rechain`): logs
-- written before event format 3 named their persons in hashed data.
CREATE TABLE log_rewrites (
    name    text        PRIMARY KEY,
    done_at timestamptz NOT NULL DEFAULT now()
);

-- An admin's erasure of an account is recorded like their other actions,
-- with the account's id (which names nobody once it is erased).
ALTER TABLE admin_actions ADD COLUMN account_id uuid REFERENCES accounts (id);
ALTER TABLE admin_actions DROP CONSTRAINT admin_actions_action_valid;
ALTER TABLE admin_actions ADD CONSTRAINT admin_actions_action_valid
    CHECK (action IN ('resolve_dispute', 'replay_running_round', 'export_log', 'audit',
                      'retry_webhook', 'resume_webhooks', 'erase_account'));

-- The seats a waiting rematch keeps for its people (its `table_created`'s
-- `rematch_of.reserved`): erasing a person declines theirs, which closes
-- the rematch (it starts only with all of its people).
CREATE TABLE table_reservations (
    account_id uuid NOT NULL REFERENCES accounts (id),
    table_id   uuid NOT NULL REFERENCES game_tables (id),
    PRIMARY KEY (account_id, table_id)
);
INSERT INTO table_reservations (account_id, table_id)
SELECT a.id, e.table_id
FROM events e
CROSS JOIN LATERAL json_array_elements(e.data -> 'rematch_of' -> 'reserved') AS r
JOIN accounts a ON a.id::text = r ->> 'account_id'
WHERE e.seq = 1 AND e.type = 'table_created' AND e.data -> 'rematch_of' IS NOT NULL
ON CONFLICT DO NOTHING;
