-- Feeds agg_storewide_events from every insert into events: a filter and a
-- projection of the batch (no grouping), so the insert's extra work stays
-- small; bots' events are left out, as the storewide views leave them out.
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.agg_storewide_events_events {on_cluster}
TO {db}.agg_storewide_events AS
SELECT shop_id, experiment_id, cityHash64(visitor_id) AS visitor_hash, cityHash64(event_id) AS event_hash, event_type,
    created_at, received_at, product_ids
FROM {db}.events
WHERE is_bot = 0 AND event_type IN ('product_viewed', 'product_added_to_cart', 'checkout_started')
