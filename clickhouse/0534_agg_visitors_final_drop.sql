-- agg_visitors_copy (0531) replaces the first form of the copy; its rows
-- are a cache that the next read writes again.
DROP TABLE IF EXISTS {db}.agg_visitors_final {on_cluster}
