-- Pre-aggregation for the results queries (docs/results.md, "Pre-aggregation"):
-- each test's events and product page views per visitor, session and
-- 15-minute bucket, so a snapshot reads about one row per visitor-session
-- instead of every event. Fed on insert by materialized views (0501, 0502)
-- and backfilled once (0510).
--
-- bucket is the UTC instant floored to 15 minutes. Every timezone in use has
-- an offset that is a multiple of 15 minutes (…, +05:30, +05:45, …) and
-- changes it on such a boundary, so toDate(bucket, tz) is the local date of
-- every row in the bucket: the results' local-date windows stay exact.
--
-- SummingMergeTree: the counts add up per key. They include copies replayed
-- by the ingest WAL (and rows written by both the view and the backfill), so
-- they are read only as "did the unit do it" (> 0), which copies cannot change.
-- is_bot is in the key: a summed flag would mean nothing.
CREATE TABLE IF NOT EXISTS {db}.agg_event_activity {on_cluster} (
    shop_id Int64,
    experiment_id String,
    visitor_id String,
    session_id String,
    bucket DateTime,
    is_bot UInt8,
    events UInt64,
    added_to_cart UInt64,
    checkouts UInt64,
    page_views UInt64
) ENGINE = {engine:SummingMergeTree()}
PARTITION BY toYYYYMM(bucket)
ORDER BY (shop_id, experiment_id, visitor_id, session_id, bucket, is_bot)
