-- Accounts and login sessions.

CREATE TABLE accounts (
    id            uuid        PRIMARY KEY,
    username      text        NOT NULL
                  CONSTRAINT accounts_username_format CHECK (username ~ '^[A-Za-z0-9_-]{3,32}$'),
    password_hash text        NOT NULL,
    role          text        NOT NULL DEFAULT 'player'
                  CONSTRAINT accounts_role_valid CHECK (role IN ('player', 'admin')),
    created_at    timestamptz NOT NULL DEFAULT now()
);

-- Usernames are unique whatever their case: "Alice" and "alice" are one name.
CREATE UNIQUE INDEX accounts_username_lower_key ON accounts (lower(username));

-- A session token is never stored: only its SHA-256 digest (hex).
CREATE TABLE sessions (
    id          uuid        PRIMARY KEY,
    token_hash  text        NOT NULL CONSTRAINT sessions_token_hash_key UNIQUE,
    account_id  uuid        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    revoked_at  timestamptz
);

CREATE INDEX sessions_account_id_idx ON sessions (account_id);
