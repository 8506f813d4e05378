-- Sanctions (docs/API.md "Corrections and sanctions"): an admin suspends an
-- account until a date, or bans it; log-ins are refused while one stands
-- (not lifted, not past its end). With `void_rated_games_since`, each rated
-- game of the account that ended since then is voided by a
-- `result_corrected` in its log; `voided_at` says when the last one was
-- (null: none to do, or not all done yet). Whoever voids them (the
-- sanction's request, then the eraser's passes) holds them until
-- `voiding_until`, renewed with each game, so that no two void a game
-- twice; a holder that stops lets the next pass take them over.
CREATE TABLE sanctions (
    id                     uuid        PRIMARY KEY,
    account_id             uuid        NOT NULL REFERENCES accounts (id),
    action                 text        NOT NULL CONSTRAINT sanctions_action_valid
                                       CHECK (action IN ('suspend', 'ban')),
    until                  timestamptz,
    reason                 text        NOT NULL,
    void_rated_games_since timestamptz,
    games_voided           integer     NOT NULL DEFAULT 0,
    voided_at              timestamptz,
    voiding_until          timestamptz,
    created_by             uuid        NOT NULL REFERENCES accounts (id),
    created_at             timestamptz NOT NULL DEFAULT now(),
    lifted_by              uuid        REFERENCES accounts (id),
    lifted_at              timestamptz,
    -- A suspension ends, a ban does not.
    CONSTRAINT sanctions_until_valid CHECK ((action = 'ban') = (until IS NULL)),
    CONSTRAINT sanctions_lifted_valid CHECK ((lifted_by IS NULL) = (lifted_at IS NULL)),
    CONSTRAINT sanctions_voided_valid CHECK (voided_at IS NULL OR void_rated_games_since IS NOT NULL)
);
CREATE INDEX sanctions_account_idx ON sanctions (account_id, created_at);
CREATE INDEX sanctions_voids_pending_idx ON sanctions (created_at, id)
    WHERE void_rated_games_since IS NOT NULL AND voided_at IS NULL;

-- Imposing and lifting one are admin actions, on the account.
ALTER TABLE admin_actions ADD COLUMN sanction_id uuid REFERENCES sanctions (id);
ALTER TABLE admin_actions DROP CONSTRAINT admin_actions_action_valid;
ALTER TABLE admin_actions ADD CONSTRAINT admin_actions_action_valid
    CHECK (action IN ('resolve_dispute', 'replay_running_round', 'export_log', 'audit',
                      'retry_webhook', 'resume_webhooks', 'erase_account', 'correct_result',
                      'sanction_account', 'lift_sanction'));
CREATE INDEX admin_actions_account_idx ON admin_actions (account_id, id)
    WHERE account_id IS NOT NULL;
