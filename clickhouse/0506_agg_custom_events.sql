-- Pre-aggregation of custom events per name, visitor, session and 15-minute
-- bucket (the bucket as in agg_event_activity). The results count distinct
-- custom events, so each row keeps the uniqExact state of its event ids
-- (the same function the raw query used): a copy replayed by the ingest WAL,
-- or written by both the view and the backfill, adds an id already in the
-- set and changes no count.
CREATE TABLE IF NOT EXISTS {db}.agg_custom_events {on_cluster} (
    shop_id Int64,
    experiment_id String,
    custom_name String,
    visitor_id String,
    session_id String,
    bucket DateTime,
    is_bot UInt8,
    event_ids AggregateFunction(uniqExact, String)
) ENGINE = {engine:AggregatingMergeTree()}
PARTITION BY toYYYYMM(bucket)
ORDER BY (shop_id, experiment_id, custom_name, visitor_id, session_id, bucket, is_bot)
