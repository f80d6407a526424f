-- One row per page load of a session in a test (GET /api/observe/session).
-- record_id is assigned on receipt and ends the sorting key, so replayed
-- copies fold. Per session: start min(seen_at), end max(seen_at), pages
-- uniqExact(record_id), landing page argMin(page_path, seen_at); device,
-- country, visitor type and UTM serve the breakdowns.
CREATE TABLE IF NOT EXISTS {db}.sessions {on_cluster} (
    shop_id Int64,
    experiment_id String,
    session_id String,
    record_id String,
    visitor_id String,
    seen_at DateTime {codec:Delta, ZSTD(1)},
    page_path String,
    referrer String,
    device {lowcard:String},
    country {lowcard:String},
    visitor_type {lowcard:String},
    utm_source {lowcard:String},
    utm_medium {lowcard:String},
    utm_campaign {lowcard:String},
    is_bot UInt8
) ENGINE = {engine:ReplacingMergeTree()}
PARTITION BY toYYYYMM(seen_at)
ORDER BY (shop_id, experiment_id, session_id, record_id)
