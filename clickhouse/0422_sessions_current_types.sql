-- ClickHouse on current versions (issue 17): tables created before the
-- lowcard and codec placeholders (or on 18.16, then upgraded) get
-- LowCardinality for their few-valued strings and codecs for timestamps
-- and payloads, as 0200–0204 now create them on a current server. Runs
-- only on ClickHouse 20.3 or later (the since placeholder); on an older server it is
-- skipped and left unrecorded, so it applies once the server is upgraded.
-- MODIFY COLUMN to LowCardinality rewrites the column as a background
-- mutation; reads see the same values meanwhile.
{since:20.3}ALTER TABLE {db}.sessions {on_cluster}
    MODIFY COLUMN seen_at DateTime CODEC(Delta, ZSTD(1)),
    MODIFY COLUMN device LowCardinality(String),
    MODIFY COLUMN country LowCardinality(String),
    MODIFY COLUMN visitor_type LowCardinality(String),
    MODIFY COLUMN utm_source LowCardinality(String),
    MODIFY COLUMN utm_medium LowCardinality(String),
    MODIFY COLUMN utm_campaign LowCardinality(String)
