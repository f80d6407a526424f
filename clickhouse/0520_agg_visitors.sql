-- The visitor rollup (docs/results.md, "Visitor rollup"): one row per
-- test and visitor with everything a whole-test snapshot reads of the
-- visitor on the visitors basis, fed on insert by materialized views
-- (0521–0524) and backfilled once (0525–0528). Once ClickHouse has merged a
-- visitor's rows into one, a snapshot reads that row as it is, without
-- grouping a million visitors again (warehouse/results_rollup.go says how
-- the rows not merged yet are handled exactly).
--
-- vid is cityHash64(visitor_id), as the results SQL keys units. Every
-- column is a state that merges idempotently (argMax, min, max,
-- uniqExact, groupUniqArray), so a row written by both a view and a
-- backfill, or replayed by the ingest WAL, counts once. A view must give
-- every column of the table on 18.16, so each gives the columns it does not
-- feed as empty states (-StateIf with a false condition), which merge as
-- nothing.
--
--   assignment  argMax by version of (assigned_at·2¹⁷ + is_bot·2¹⁶ + group+1):
--               the first assignment, as the results SQL packs it
--   device …    the assignment's attributes that breakdowns read
--   sessions    distinct sessions with a human page load
--   pages       distinct page loads (hash of session and record id)
--   spans       (session hash, second) of each page load: a session's
--               duration, read only for visitors with several sessions
--   page_first, page_last   the visitor's first and last page load
--   added_to_cart, checkouts, clicked   did it (events, product page views)
--   seen_first, seen_last   earliest and latest moment of any of it: a
--               snapshot uses the rollup only when they lie in its window
CREATE TABLE IF NOT EXISTS {db}.agg_visitors {on_cluster} (
    shop_id Int64,
    experiment_id String,
    vid UInt64,
    assignment AggregateFunction(argMax, UInt64, UInt64),
    device AggregateFunction(argMax, String, UInt64),
    country AggregateFunction(argMax, String, UInt64),
    visitor_type AggregateFunction(argMax, String, UInt64),
    utm_source AggregateFunction(argMax, String, UInt64),
    utm_medium AggregateFunction(argMax, String, UInt64),
    utm_campaign AggregateFunction(argMax, String, UInt64),
    gclid AggregateFunction(argMax, String, UInt64),
    fbclid AggregateFunction(argMax, String, UInt64),
    sessions AggregateFunction(uniqExact, UInt64),
    pages AggregateFunction(uniqExact, UInt64),
    spans AggregateFunction(groupUniqArray, Tuple(UInt64, UInt32)),
    page_first AggregateFunction(min, DateTime),
    page_last AggregateFunction(max, DateTime),
    added_to_cart AggregateFunction(max, UInt8),
    checkouts AggregateFunction(max, UInt8),
    clicked AggregateFunction(max, UInt8),
    seen_first AggregateFunction(min, DateTime),
    seen_last AggregateFunction(max, DateTime)
) ENGINE = {engine:AggregatingMergeTree()}
ORDER BY (shop_id, experiment_id, vid)
