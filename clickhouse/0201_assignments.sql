-- A visitor's group in a test; the first assignment received stands.
-- ReplacingMergeTree(version) keeps the row with the highest version per
-- sorting key, and the ingest writes version = 2^64-1 - receipt time in ns, so
-- the earliest receipt has the highest version and wins; a replayed copy of a
-- row carries the same version and is simply folded. We chose this over an
-- AggregatingMergeTree of argMinState columns because it keeps plain columns
-- (inserts need no -State functions or materialized view, and every breakdown
-- column is readable directly). Queries must not wait for merges: take
-- argMax(col, version) GROUP BY visitor_id, or read with FINAL.
-- No time partition: merges fold rows only within one partition, and a
-- visitor's later assignment may arrive in another month.
CREATE TABLE IF NOT EXISTS {db}.assignments {on_cluster} (
    shop_id Int64,
    experiment_id String,
    visitor_id String,
    version UInt64,
    assignment_id String,
    session_id String,
    test_group Int16,
    reason {lowcard:String},
    country {lowcard:String},
    device {lowcard:String},
    visitor_type {lowcard:String},
    utm_source {lowcard:String},
    utm_medium {lowcard:String},
    utm_campaign {lowcard:String},
    gclid String,
    fbclid String,
    assigned_at DateTime {codec:Delta, ZSTD(1)},
    received_at DateTime {codec:Delta, ZSTD(1)},
    is_bot UInt8
) ENGINE = {engine:ReplacingMergeTree(version)}
ORDER BY (shop_id, experiment_id, visitor_id)
