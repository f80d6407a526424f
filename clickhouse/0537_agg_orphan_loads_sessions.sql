-- Feeds agg_orphan_loads (0536) from every insert into sessions.
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.agg_orphan_loads_sessions {on_cluster}
TO {db}.agg_orphan_loads AS
SELECT shop_id, experiment_id, toUInt64(count()) AS loads
FROM {db}.sessions
WHERE visitor_id = ''
GROUP BY shop_id, experiment_id
