-- Page loads that name no visitor (sent with the contract's three
-- parameters), counted per test. The results read the visitor rollup only
-- when a test has none (warehouse/results.go, facts); looking for one in
-- agg_session_pages read a million visitor ids per snapshot, this is one
-- row per test that has any. Fed by 0537, backfilled by 0538; a load
-- counted by both only makes the count larger, and only "any" is read.
CREATE TABLE IF NOT EXISTS {db}.agg_orphan_loads {on_cluster} (
    shop_id Int64,
    experiment_id String,
    loads UInt64
) ENGINE = {engine:SummingMergeTree()}
ORDER BY (shop_id, experiment_id)
