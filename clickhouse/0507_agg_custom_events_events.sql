-- Feeds agg_custom_events from every insert into events.
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.agg_custom_events_events {on_cluster}
TO {db}.agg_custom_events AS
SELECT shop_id, experiment_id, custom_name, visitor_id, session_id, toStartOfFifteenMinutes(created_at) AS bucket,
    is_bot, uniqExactState(event_id) AS event_ids
FROM {db}.events
WHERE custom_name != ''
GROUP BY shop_id, experiment_id, custom_name, visitor_id, session_id, bucket, is_bot
