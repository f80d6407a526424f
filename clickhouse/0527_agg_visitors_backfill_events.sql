-- Backfill of agg_visitors from the events written before its view existed
-- (0523_agg_visitors_events.sql; as 0510 explains, a row written by both counts once).
INSERT INTO {db}.agg_visitors (shop_id, experiment_id, vid, assignment, device, country, visitor_type,
    utm_source, utm_medium, utm_campaign, gclid, fbclid, sessions, pages, spans, page_first, page_last,
    added_to_cart, checkouts, clicked, seen_first, seen_last)
SELECT shop_id, experiment_id, cityHash64(visitor_id) AS vid,
    argMaxStateIf(toUInt64(0), toUInt64(0), 0) AS assignment, argMaxStateIf('', toUInt64(0), 0) AS device,
    argMaxStateIf('', toUInt64(0), 0) AS country, argMaxStateIf('', toUInt64(0), 0) AS visitor_type,
    argMaxStateIf('', toUInt64(0), 0) AS utm_source, argMaxStateIf('', toUInt64(0), 0) AS utm_medium,
    argMaxStateIf('', toUInt64(0), 0) AS utm_campaign, argMaxStateIf('', toUInt64(0), 0) AS gclid,
    argMaxStateIf('', toUInt64(0), 0) AS fbclid, uniqExactStateIf(toUInt64(0), 0) AS sessions,
    uniqExactStateIf(toUInt64(0), 0) AS pages, groupUniqArrayStateIf((toUInt64(0), toUInt32(0)), 0) AS spans,
    minStateIf(toDateTime(0), 0) AS page_first, maxStateIf(toDateTime(0), 0) AS page_last,
    maxState(toUInt8(event_type = 'product_added_to_cart')) AS added_to_cart,
    maxState(toUInt8(event_type IN ('checkout_started', 'checkout_completed'))) AS checkouts,
    maxStateIf(toUInt8(0), 0) AS clicked, minState(created_at) AS seen_first,
    maxState(created_at) AS seen_last
FROM {db}.events
WHERE is_bot = 0 AND event_type IN ('product_added_to_cart', 'checkout_started', 'checkout_completed')
GROUP BY shop_id, experiment_id, vid
