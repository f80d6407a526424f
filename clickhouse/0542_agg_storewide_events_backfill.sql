-- Backfill of agg_storewide_events: the events written before its view
-- existed. The view is created first (0541), so an event that arrives while
-- this runs may be written by both; the table stays exact for how it is
-- read (see 0540), and so does running this step twice.
INSERT INTO {db}.agg_storewide_events (shop_id, experiment_id, visitor_hash, event_hash, event_type, created_at, received_at,
    product_ids)
SELECT shop_id, experiment_id, cityHash64(visitor_id) AS visitor_hash, cityHash64(event_id) AS event_hash, event_type,
    created_at, received_at, product_ids
FROM {db}.events
WHERE is_bot = 0 AND event_type IN ('product_viewed', 'product_added_to_cart', 'checkout_started')
