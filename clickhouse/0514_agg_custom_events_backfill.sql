-- Backfill (docs/results.md, "Pre-aggregation"): the rows written before the
-- view existed. The view is created first (an earlier file), so a row that
-- arrives while this runs may be written by both; the table stays exact
-- for how it is read (see its DDL), and so does running this step twice.
INSERT INTO {db}.agg_custom_events (shop_id, experiment_id, custom_name, visitor_id, session_id, bucket, is_bot,
    event_ids)
SELECT shop_id, experiment_id, custom_name, visitor_id, session_id, toStartOfFifteenMinutes(created_at) AS bucket,
    is_bot, uniqExactState(event_id) AS event_ids
FROM {db}.events
WHERE custom_name != ''
GROUP BY shop_id, experiment_id, custom_name, visitor_id, session_id, bucket, is_bot
