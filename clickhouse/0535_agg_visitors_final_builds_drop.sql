-- agg_visitors_copy_builds (0533) replaces it.
DROP TABLE IF EXISTS {db}.agg_visitors_final_builds {on_cluster}
