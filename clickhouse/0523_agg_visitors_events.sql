-- Feeds agg_visitors from every insert into events: only the human events
-- a snapshot reads on the visitors basis (add-to-carts and checkouts), so
-- the view writes a row for few of the events it sees.
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.agg_visitors_events {on_cluster}
TO {db}.agg_visitors AS
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
