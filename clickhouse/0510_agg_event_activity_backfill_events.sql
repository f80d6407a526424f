-- Backfill (docs/results.md, "Pre-aggregation"): the rows written before the
-- view existed. The view is created first (an earlier file), so a row that
-- arrives while this runs may be written by both; the table stays exact
-- for how it is read (see its DDL), and so does running this step twice.
INSERT INTO {db}.agg_event_activity (shop_id, experiment_id, visitor_id, session_id, bucket, is_bot,
    events, added_to_cart, checkouts, page_views)
SELECT shop_id, experiment_id, visitor_id, session_id, toStartOfFifteenMinutes(created_at) AS bucket, is_bot,
    toUInt64(count()) AS events,
    toUInt64(countIf(event_type = 'product_added_to_cart')) AS added_to_cart,
    toUInt64(countIf(event_type IN ('checkout_started', 'checkout_completed'))) AS checkouts,
    toUInt64(0) AS page_views
FROM {db}.events
GROUP BY shop_id, experiment_id, visitor_id, session_id, bucket, is_bot
