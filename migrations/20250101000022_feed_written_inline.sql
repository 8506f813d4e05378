-- Feed items are written by the statements that cause them, the locks, the
-- items and their pushes inline (`store::feed::query_writing_feed`, as
-- `feed_write` did them): a PL/pgSQL call cost about 55 µs a statement
-- beyond its own statements (BENCHMARKS.md, thirty-third pass). Nothing
-- calls the function any more.
DROP FUNCTION feed_write(uuid[], text[], uuid[], timestamptz[], timestamptz[], bigint[],
                         boolean, text[]);
