-- What a feed item costs (BENCHMARKS.md, thirty-second pass).
--
-- Every move writes a feed item (the next player's `your_turn`), and the
-- foreign key from `feed_items` to `accounts` was checked for each: an
-- after-row trigger, queued and run at the statement's end, each a query
-- of `accounts`. Alone it was a third of the items' insert (about 10 us of
-- PostgreSQL's CPU an item on the bench machine) and it guarded nothing:
-- an item is only ever written for a seated player (`table_players`, keyed
-- to `accounts`), and an account is never deleted (erasure empties it in
-- place and deletes its items itself, `store::accounts`).
--
-- The key goes; that an account is never deleted becomes the database's
-- own rule instead, so that the items' accounts stay as sure as the key
-- made them.
ALTER TABLE feed_items DROP CONSTRAINT feed_items_account_id_fkey;

CREATE FUNCTION accounts_refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'accounts are never deleted: erasure empties them in place'
        USING ERRCODE = 'restrict_violation';
END
$$;

CREATE TRIGGER accounts_never_deleted
    BEFORE DELETE ON accounts
    FOR EACH ROW EXECUTE FUNCTION accounts_refuse_delete();
CREATE TRIGGER accounts_no_truncate
    BEFORE TRUNCATE ON accounts
    FOR EACH STATEMENT EXECUTE FUNCTION accounts_refuse_delete();
