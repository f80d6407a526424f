-- Which DDL files have been applied. Kept by warehouse.Migrate.
CREATE TABLE IF NOT EXISTS {db}.schema_migrations {on_cluster} (
    version    UInt32,
    name       String,
    applied_at DateTime
) ENGINE = {engine:ReplacingMergeTree()} ORDER BY version
