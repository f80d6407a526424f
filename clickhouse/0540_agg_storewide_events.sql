-- Pre-aggregation for storewide analytics (docs/results.md,
-- "Pre-aggregation"): the product-funnel events of real visitors (product
-- views, add-to-carts, started checkouts; about a tenth of events) of every
-- test and none, narrowed to what the storewide views read, with the visitor
-- and event ids hashed once at insert (cityHash64, as the storewide query
-- hashes assignments' visitor ids). The storewide views then read these
-- rows of the shop instead of scanning all its events.
--
-- One row per events row: an event carrying two tests has two rows, as in
-- events, so reset analytics (a delete of one test's range) leaves the
-- other test's copy counting, exactly as in events. created_at is kept
-- whole, so local-date windows are exact in any timezone; received_at feeds
-- the cache's data version.
--
-- ReplacingMergeTree: merges fold copies the ingest WAL replayed (and rows
-- written by both the view and the backfill). Merges are eventual, so the
-- query counts distinct (visitor, event) pairs, which copies cannot change.
CREATE TABLE IF NOT EXISTS {db}.agg_storewide_events {on_cluster} (
    shop_id Int64,
    experiment_id String,
    visitor_hash UInt64,
    event_hash UInt64,
    event_type {lowcard:String},
    created_at DateTime {codec:Delta, ZSTD(1)},
    received_at DateTime {codec:Delta, ZSTD(1)},
    product_ids Array(String)
) ENGINE = {engine:ReplacingMergeTree()}
PARTITION BY toYYYYMM(created_at)
ORDER BY (shop_id, experiment_id, visitor_hash, event_hash)
