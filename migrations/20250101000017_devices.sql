-- Push to phones (docs/API.md "Push to phones"): the phones an account
-- registered, by their platform's token. A token is one phone: registered
-- again (by its account or another), it is the same device, moved to the
-- account that registered it last. Erasing an account drops its devices.
CREATE TABLE devices (
    id         uuid        PRIMARY KEY,
    account_id uuid        NOT NULL REFERENCES accounts (id),
    platform   text        NOT NULL CONSTRAINT devices_platform_valid
                           CHECK (platform IN ('apns', 'fcm')),
    token      text        NOT NULL,
    locale     text,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT devices_token_unique UNIQUE (platform, token)
);
CREATE INDEX devices_account_idx ON devices (account_id, created_at);
