-- Feeds agg_product_activity from the events that scoped results read.
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.agg_product_activity_events {on_cluster}
TO {db}.agg_product_activity AS
SELECT shop_id, experiment_id, visitor_id, session_id, toStartOfFifteenMinutes(created_at) AS bucket, is_bot,
    product_id,
    toUInt64(countIf(event_type = 'product_added_to_cart')) AS added_to_cart,
    toUInt64(countIf(event_type = 'checkout_started')) AS checkouts_started,
    toUInt64(countIf(event_type = 'product_viewed')) AS product_views,
    toUInt64(0) AS page_views
FROM {db}.events
ARRAY JOIN product_ids AS product_id
WHERE event_type IN ('product_added_to_cart', 'checkout_started', 'product_viewed')
GROUP BY shop_id, experiment_id, visitor_id, session_id, bucket, is_bot, product_id
