-- The finalized copy of agg_visitors' base part, second form (replaces
-- agg_visitors_final, 0529, dropped by 0534). As before, each row is one
-- visitor of the part with its states turned into values once (docs/
-- results.md, "Visitor rollup"). Two flags say what the visitor had when
-- the copy was written: orders (ordered) and custom events (fired). A read
-- looks up the copy rows of visitors with orders or custom events (their
-- group and attributes), and sorting those first, with small granules,
-- makes such a lookup read about those rows instead of the whole copy:
-- the primary key narrows `vid IN (…)` to the flagged block and to the
-- granules of the few visitors who ordered or fired since.
CREATE TABLE IF NOT EXISTS {db}.agg_visitors_copy {on_cluster} (
    shop_id Int64,
    experiment_id String,
    source_part String,
    build UInt64,
    ordered UInt8,
    fired UInt8,
    vid UInt64,
    pack UInt64,
    device String,
    country String,
    visitor_type String,
    utm_source String,
    utm_medium String,
    utm_campaign String,
    gclid String,
    fbclid String,
    sessions UInt64,
    pages UInt64,
    staying Float64,
    added_to_cart UInt8,
    checkouts UInt8,
    clicked UInt8,
    seen_first DateTime,
    seen_last DateTime
) ENGINE = {engine:MergeTree()}
PARTITION BY source_part
ORDER BY (shop_id, experiment_id, build, ordered, fired, vid)
SETTINGS index_granularity = 1024
