-- The cube of a build of agg_visitors_copy (docs/results.md, "Visitor
-- rollup"): its human assigned visitors summed per group and per
-- combination of the attributes breakdowns read (click ids only as present
-- or not). A snapshot sums these few rows instead of a million visitors,
-- and corrects them for the visitors the cube cannot know: those with
-- orders (which arrive and change) and those with rows in newer parts
-- (warehouse/results_rollup_cube.go). Written with the copy, in the same
-- build, and dropped with it.
CREATE TABLE IF NOT EXISTS {db}.agg_visitors_cube {on_cluster} (
    shop_id Int64,
    experiment_id String,
    source_part String,
    build UInt64,
    test_group Int16,
    device String,
    country String,
    visitor_type String,
    utm_source String,
    utm_medium String,
    utm_campaign String,
    gclid String,
    fbclid String,
    visitors UInt64,
    sessions UInt64,
    pages UInt64,
    bounced UInt64,
    staying Float64,
    staying_sq Float64,
    added_to_cart UInt64,
    checkouts UInt64,
    clicked UInt64,
    seen_first DateTime,
    seen_last DateTime
) ENGINE = {engine:MergeTree()}
PARTITION BY source_part
ORDER BY (shop_id, experiment_id, build)
