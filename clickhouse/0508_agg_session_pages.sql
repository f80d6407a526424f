-- Pre-aggregation of session page loads per session, visitor and 15-minute
-- bucket (the bucket as in agg_event_activity). Each row keeps the states
-- the results read per session: its distinct page loads (uniqExact of a
-- 64-bit hash of record_id, as the raw query counted them, so a replayed
-- copy changes nothing), its first and last page load, and its landing page
-- (the path of the first). All four states merge idempotently: a row
-- written by both the view and the backfill counts once.
CREATE TABLE IF NOT EXISTS {db}.agg_session_pages {on_cluster} (
    shop_id Int64,
    experiment_id String,
    session_id String,
    visitor_id String,
    bucket DateTime,
    is_bot UInt8,
    record_ids AggregateFunction(uniqExact, UInt64),
    first_seen AggregateFunction(min, DateTime),
    last_seen AggregateFunction(max, DateTime),
    landing AggregateFunction(argMin, String, DateTime)
) ENGINE = {engine:AggregatingMergeTree()}
PARTITION BY toYYYYMM(bucket)
ORDER BY (shop_id, experiment_id, session_id, visitor_id, bucket, is_bot)
