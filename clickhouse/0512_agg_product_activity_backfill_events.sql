-- Backfill (docs/results.md, "Pre-aggregation"): the rows written before the
-- view existed. The view is created first (an earlier file), so a row that
-- arrives while this runs may be written by both; the table stays exact
-- for how it is read (see its DDL), and so does running this step twice.
INSERT INTO {db}.agg_product_activity (shop_id, experiment_id, visitor_id, session_id, bucket, is_bot,
    product_id, added_to_cart, checkouts_started, product_views, page_views)
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
