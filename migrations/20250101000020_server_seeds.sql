-- Fair deals (docs/API.md "Fair deals"): each table's secret server seed,
-- which keys every shuffle of its game. The log holds its SHA-256 from the
-- table's creation and the seed itself once the game is over; until then
-- it lives here alone, apart from every table a read selects from, and is
-- read by the command path only. Tables opened before fair deals have none.
CREATE TABLE table_seeds (
    table_id    uuid  PRIMARY KEY REFERENCES game_tables (id) ON DELETE CASCADE,
    server_seed bytea NOT NULL CONSTRAINT table_seeds_length CHECK (octet_length(server_seed) = 32)
);
