-- Feeds agg_visitors from every insert into sessions: the human page loads
-- of a named visitor (a load without one is found by the results SQL,
-- which then reads the raw path).
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.agg_visitors_sessions {on_cluster}
TO {db}.agg_visitors AS
SELECT shop_id, experiment_id, cityHash64(visitor_id) AS vid,
    argMaxStateIf(toUInt64(0), toUInt64(0), 0) AS assignment, argMaxStateIf('', toUInt64(0), 0) AS device,
    argMaxStateIf('', toUInt64(0), 0) AS country, argMaxStateIf('', toUInt64(0), 0) AS visitor_type,
    argMaxStateIf('', toUInt64(0), 0) AS utm_source, argMaxStateIf('', toUInt64(0), 0) AS utm_medium,
    argMaxStateIf('', toUInt64(0), 0) AS utm_campaign, argMaxStateIf('', toUInt64(0), 0) AS gclid,
    argMaxStateIf('', toUInt64(0), 0) AS fbclid, uniqExactState(cityHash64(session_id)) AS sessions,
    uniqExactState(cityHash64(session_id, record_id)) AS pages,
    groupUniqArrayState((cityHash64(session_id), toUInt32(seen_at))) AS spans,
    minState(seen_at) AS page_first, maxState(seen_at) AS page_last,
    maxStateIf(toUInt8(0), 0) AS added_to_cart, maxStateIf(toUInt8(0), 0) AS checkouts,
    maxStateIf(toUInt8(0), 0) AS clicked, minState(seen_at) AS seen_first, maxState(seen_at) AS seen_last
FROM {db}.sessions
WHERE is_bot = 0 AND visitor_id != ''
GROUP BY shop_id, experiment_id, vid
