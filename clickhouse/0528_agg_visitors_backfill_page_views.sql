-- Backfill of agg_visitors from the page_views written before its view existed
-- (0524_agg_visitors_page_views.sql; as 0510 explains, a row written by both counts once).
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
    maxStateIf(toUInt8(0), 0) AS added_to_cart, maxStateIf(toUInt8(0), 0) AS checkouts,
    maxState(toUInt8(1)) AS clicked, minState(viewed_at) AS seen_first, maxState(viewed_at) AS seen_last
FROM {db}.page_views
WHERE is_bot = 0
GROUP BY shop_id, experiment_id, vid
