-- Feeds agg_visitors from every insert into assignments: the packed first
-- assignment and its attributes (bots included: the pack says bot).
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.agg_visitors_assignments {on_cluster}
TO {db}.agg_visitors AS
SELECT shop_id, experiment_id, cityHash64(visitor_id) AS vid,
    argMaxState(toUInt64(toUInt32(assigned_at)) * 131072 + toUInt64(is_bot) * 65536 + toUInt64(test_group + 1), version) AS assignment,
    argMaxState(device, version) AS device, argMaxState(country, version) AS country,
    argMaxState(visitor_type, version) AS visitor_type, argMaxState(utm_source, version) AS utm_source,
    argMaxState(utm_medium, version) AS utm_medium, argMaxState(utm_campaign, version) AS utm_campaign,
    argMaxState(gclid, version) AS gclid, argMaxState(fbclid, version) AS fbclid,
    uniqExactStateIf(toUInt64(0), 0) AS sessions, uniqExactStateIf(toUInt64(0), 0) AS pages,
    groupUniqArrayStateIf((toUInt64(0), toUInt32(0)), 0) AS spans,
    minStateIf(toDateTime(0), 0) AS page_first, maxStateIf(toDateTime(0), 0) AS page_last,
    maxStateIf(toUInt8(0), 0) AS added_to_cart, maxStateIf(toUInt8(0), 0) AS checkouts,
    maxStateIf(toUInt8(0), 0) AS clicked, minState(assigned_at) AS seen_first,
    maxState(assigned_at) AS seen_last
FROM {db}.assignments
GROUP BY shop_id, experiment_id, vid
