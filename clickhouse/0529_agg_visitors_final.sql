-- The finalized copy of agg_visitors' base part (docs/results.md, "Visitor
-- rollup"): for one test, the rows of the part that holds most of its
-- visitors, each state turned into its value once, so that a snapshot
-- reads plain columns instead of finalizing a million states. A part never
-- changes (merges and mutations write new ones), so the copy stays exact
-- for as long as its source part is active; the results build it when the
-- base part changes and drop the copies of parts that are gone.
--
-- build tells two builds of the same copy apart (they may run at once);
-- agg_visitors_final_builds (0530) names the finished ones, and a reader
-- uses only one of those.
CREATE TABLE IF NOT EXISTS {db}.agg_visitors_final {on_cluster} (
    shop_id Int64,
    experiment_id String,
    source_part String,
    build UInt64,
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
ORDER BY (shop_id, experiment_id, build, vid)
