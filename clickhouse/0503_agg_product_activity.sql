-- Pre-aggregation for product-scoped results: agg_event_activity split by
-- product, one row per product an event or page view names (an event's
-- product_ids are ARRAY JOINed). A scoped query asks whether a unit did
-- something with any product of a group, which is whether a row of one of
-- those products has a count above zero. Counts as in agg_event_activity:
-- replays and a repeated backfill may inflate them, existence is exact.
CREATE TABLE IF NOT EXISTS {db}.agg_product_activity {on_cluster} (
    shop_id Int64,
    experiment_id String,
    visitor_id String,
    session_id String,
    bucket DateTime,
    is_bot UInt8,
    product_id String,
    added_to_cart UInt64,
    checkouts_started UInt64,
    product_views UInt64,
    page_views UInt64
) ENGINE = {engine:SummingMergeTree()}
PARTITION BY toYYYYMM(bucket)
ORDER BY (shop_id, experiment_id, visitor_id, session_id, bucket, is_bot, product_id)
