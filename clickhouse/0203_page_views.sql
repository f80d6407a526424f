-- One row per product page view in a test (GET /api/observe). view_id is
-- assigned on receipt; count uniqExact(view_id) so a replayed copy never counts.
CREATE TABLE IF NOT EXISTS {db}.page_views {on_cluster} (
    shop_id Int64,
    experiment_id String,
    product_id String,
    view_id String,
    session_id String,
    visitor_id String,
    viewed_at DateTime {codec:Delta, ZSTD(1)},
    is_bot UInt8
) ENGINE = {engine:ReplacingMergeTree()}
PARTITION BY toYYYYMM(viewed_at)
ORDER BY (shop_id, experiment_id, product_id, view_id)
