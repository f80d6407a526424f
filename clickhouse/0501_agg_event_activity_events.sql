-- Feeds agg_event_activity from every insert into events: any event (a
-- session with one is a unit on the sessions basis), add-to-carts, and
-- started or completed checkouts.
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.agg_event_activity_events {on_cluster}
TO {db}.agg_event_activity AS
SELECT shop_id, experiment_id, visitor_id, session_id, toStartOfFifteenMinutes(created_at) AS bucket, is_bot,
    toUInt64(count()) AS events,
    toUInt64(countIf(event_type = 'product_added_to_cart')) AS added_to_cart,
    toUInt64(countIf(event_type IN ('checkout_started', 'checkout_completed'))) AS checkouts,
    toUInt64(0) AS page_views
FROM {db}.events
GROUP BY shop_id, experiment_id, visitor_id, session_id, bucket, is_bot
