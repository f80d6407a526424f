-- The finished builds of agg_visitors_copy and its cube: a row is written
-- after both, so a reader never uses a build still being written.
CREATE TABLE IF NOT EXISTS {db}.agg_visitors_copy_builds {on_cluster} (
    shop_id Int64,
    experiment_id String,
    source_part String,
    build UInt64,
    visitors UInt64,
    built_at DateTime
) ENGINE = {engine:MergeTree()}
ORDER BY (shop_id, experiment_id, source_part, build)
