-- Feeds agg_session_pages from every insert into sessions.
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.agg_session_pages_sessions {on_cluster}
TO {db}.agg_session_pages AS
SELECT shop_id, experiment_id, session_id, visitor_id, toStartOfFifteenMinutes(seen_at) AS bucket, is_bot,
    uniqExactState(cityHash64(record_id)) AS record_ids, minState(seen_at) AS first_seen,
    maxState(seen_at) AS last_seen, argMinState(page_path, seen_at) AS landing
FROM {db}.sessions
GROUP BY shop_id, experiment_id, session_id, visitor_id, bucket, is_bot
