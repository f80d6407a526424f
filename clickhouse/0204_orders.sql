-- Orders attributed to a test group. Edits and refunds are new rows with a
-- higher version; ReplacingMergeTree(version) keeps the latest per
-- (shop_id, experiment_id, order_id), and queries take argMax(col, version)
-- per order (or FINAL) rather than waiting for merges. A replayed copy has the
-- same version and folds. Line items are parallel arrays, one element a line.
-- No time partition, so every version of an order can fold together.
CREATE TABLE IF NOT EXISTS {db}.orders {on_cluster} (
    shop_id Int64,
    experiment_id String,
    order_id String,
    version UInt64,
    test_group Int16,
    visitor_id String,
    session_id String,
    revenue Float64,
    cost Float64,
    currency {lowcard:String},
    line_product_ids Array(String),
    line_variant_ids Array(String),
    line_quantities Array(UInt32),
    line_prices Array(Float64),
    created_at DateTime {codec:Delta, ZSTD(1)},
    source {lowcard:String},
    is_bot UInt8
) ENGINE = {engine:ReplacingMergeTree(version)}
ORDER BY (shop_id, experiment_id, order_id)
