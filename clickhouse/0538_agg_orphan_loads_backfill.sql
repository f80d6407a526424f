-- Backfill of agg_orphan_loads from the sessions written before its view
-- existed (0537).
INSERT INTO {db}.agg_orphan_loads (shop_id, experiment_id, loads)
SELECT shop_id, experiment_id, toUInt64(count()) AS loads
FROM {db}.sessions
WHERE visitor_id = ''
GROUP BY shop_id, experiment_id
