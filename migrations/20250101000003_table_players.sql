-- Who sits at which table: a projection of the events (player_joined,
-- player_left, game_started renumbers the seats), kept up to date in the
-- appending transaction. It answers `GET /v1/tables?mine=true` and the lists.

ALTER TABLE game_tables ADD COLUMN seats integer
    CONSTRAINT game_tables_seats_positive CHECK (seats IS NULL OR seats >= 1);

CREATE TABLE table_players (
    table_id    uuid    NOT NULL REFERENCES game_tables (id),
    account_id  uuid    NOT NULL REFERENCES accounts (id),
    seat        integer NOT NULL CONSTRAINT table_players_seat_nonneg CHECK (seat >= 0),
    CONSTRAINT table_players_pkey PRIMARY KEY (table_id, account_id),
    CONSTRAINT table_players_seat_key UNIQUE (table_id, seat)
);

CREATE INDEX table_players_account_id_idx ON table_players (account_id, table_id);
-- The lists are ordered by (created_at, id).
CREATE INDEX game_tables_created_at_id_idx ON game_tables (created_at, id);
