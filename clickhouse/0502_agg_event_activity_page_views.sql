-- Feeds agg_event_activity from every insert into page_views: a unit that
-- viewed a product page clicked through.
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.agg_event_activity_page_views {on_cluster}
TO {db}.agg_event_activity AS
SELECT shop_id, experiment_id, visitor_id, session_id, toStartOfFifteenMinutes(viewed_at) AS bucket, is_bot,
    toUInt64(0) AS events, toUInt64(0) AS added_to_cart, toUInt64(0) AS checkouts,
    toUInt64(count()) AS page_views
FROM {db}.page_views
GROUP BY shop_id, experiment_id, visitor_id, session_id, bucket, is_bot
