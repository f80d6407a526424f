-- What an order charged for shipping, so a shipping test's results can say
-- what its rates brought in per group (session analytics'
-- shippingRevenue). shipping is the order's shipping lines as they stand
-- (Decimal(18,4) like revenue, clickhouse/0411); shipping_recorded says
-- the row knows it. Rows written before this column, and rows of the
-- legacy POST /api/analytics/order (its body has no shipping), hold 0 and
-- 0: "not recorded", which the results report as null, never as a zero
-- charge. 18.16 has no ADD COLUMN IF NOT EXISTS; warehouse.Migrate skips
-- this statement when both columns are already there (a crash between the
-- ALTER and its record), so a rerun does no harm.
ALTER TABLE {db}.orders {on_cluster}
    ADD COLUMN shipping Decimal(18, 4) DEFAULT 0,
    ADD COLUMN shipping_recorded UInt8 DEFAULT 0
