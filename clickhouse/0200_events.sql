-- Storefront behavioral events, one row per (event, experiment id it carries);
-- an event without an active assignment has experiment_id ''.
-- ReplacingMergeTree with event_id last in the sorting key: the ingest WAL may
-- replay a batch (crash, failed insert), and merges fold those copies. Merges
-- are eventual, so queries count uniqExact(event_id) (or read FINAL) and never
-- count() raw rows. Duplicates share created_at, hence the same partition.
-- (shop_id, experiment_id, visitor_id) first: results read one test's range
-- and aggregate per visitor.
CREATE TABLE IF NOT EXISTS {db}.events {on_cluster} (
    shop_id Int64,
    experiment_id String,
    event_id String,
    received_at DateTime {codec:Delta, ZSTD(1)},
    created_at DateTime {codec:Delta, ZSTD(1)},
    session_id String,
    visitor_id String,
    event_type {lowcard:String},
    source {lowcard:String},
    page_path String,
    page_type {lowcard:String},
    product_ids Array(String),
    variant_ids Array(String),
    quantity UInt32,
    checkout_token String,
    order_id String,
    custom_name String,
    revenue Float64,
    test_group Nullable(Int16),
    is_bot UInt8,
    payload String {codec:ZSTD(3)}
) ENGINE = {engine:ReplacingMergeTree()}
PARTITION BY toYYYYMM(created_at)
ORDER BY (shop_id, experiment_id, visitor_id, event_id)
