-- Disputes (docs/API.md "Disputes, the admin console, metrics"): a player
-- of a table says a finished round's score (or the game's) is wrong; an
-- admin resolves it with a verdict and a note. A resolution never touches
-- the game log.
CREATE TABLE disputes (
    id          uuid        PRIMARY KEY,
    table_id    uuid        NOT NULL REFERENCES game_tables (id),
    account_id  uuid        NOT NULL REFERENCES accounts (id),
    round       integer     CONSTRAINT disputes_round_positive CHECK (round >= 1),
    reason      text        NOT NULL CONSTRAINT disputes_reason_length
                            CHECK (char_length(reason) BETWEEN 1 AND 2000),
    status      text        NOT NULL DEFAULT 'open'
                            CONSTRAINT disputes_status_valid CHECK (status IN ('open', 'resolved')),
    verdict     text        CONSTRAINT disputes_verdict_valid CHECK (verdict IN ('upheld', 'rejected')),
    note        text        CONSTRAINT disputes_note_length CHECK (char_length(note) <= 2000),
    resolved_by uuid        REFERENCES accounts (id),
    resolved_at timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now(),
    -- Resolved exactly when it has a verdict, who gave it and when.
    CONSTRAINT disputes_resolution_whole CHECK (
        (status = 'open') = (verdict IS NULL AND resolved_by IS NULL AND resolved_at IS NULL)
    )
);
-- The admins' queue (by status, oldest first) and a player's own list.
CREATE INDEX disputes_queue_idx ON disputes (status, created_at, id);
CREATE INDEX disputes_account_idx ON disputes (account_id, created_at, id);

-- What admins did: resolving a dispute, reading a running round's replay,
-- exporting a log, running an audit. Append-only, like the events.
CREATE TABLE admin_actions (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    admin_id    uuid        NOT NULL REFERENCES accounts (id),
    action      text        NOT NULL CONSTRAINT admin_actions_action_valid
                            CHECK (action IN ('resolve_dispute', 'replay_running_round',
                                              'export_log', 'audit')),
    table_id    uuid        REFERENCES game_tables (id),
    dispute_id  uuid        REFERENCES disputes (id),
    at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX admin_actions_table_idx ON admin_actions (table_id, id);

CREATE FUNCTION admin_actions_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'admin actions are append-only: % refused', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER admin_actions_append_only
    BEFORE UPDATE OR DELETE ON admin_actions
    FOR EACH ROW EXECUTE FUNCTION admin_actions_refuse_change();

CREATE TRIGGER admin_actions_no_truncate
    BEFORE TRUNCATE ON admin_actions
    FOR EACH STATEMENT EXECUTE FUNCTION admin_actions_refuse_change();
