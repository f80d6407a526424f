-- Backfill (docs/results.md, "Pre-aggregation"): the rows written before the
-- view existed. The view is created first (an earlier file), so a row that
-- arrives while this runs may be written by both; the table stays exact
-- for how it is read (see its DDL), and so does running this step twice.
INSERT INTO {db}.agg_session_pages (shop_id, experiment_id, session_id, visitor_id, bucket, is_bot,
    record_ids, first_seen, last_seen, landing)
SELECT shop_id, experiment_id, session_id, visitor_id, toStartOfFifteenMinutes(seen_at) AS bucket, is_bot,
    uniqExactState(cityHash64(record_id)) AS record_ids, minState(seen_at) AS first_seen,
    maxState(seen_at) AS last_seen, argMinState(page_path, seen_at) AS landing
FROM {db}.sessions
GROUP BY shop_id, experiment_id, session_id, visitor_id, bucket, is_bot
