-- Money as exact decimals (issue 17), step 1 of 2: make the coming
-- Float64 → Decimal(18,4) conversion exact. ClickHouse (18.16 and current)
-- converts a float to a decimal by truncating, so 19.99, held as
-- 19.98999…, would become 19.9899. This rounds each amount to 4 decimals
-- and adds 0.4 of the last unit, so the truncation in 0411 lands on the
-- intended digits (19.99004 → 19.9900). Amounts are never negative (the
-- legacy endpoint refuses them, webhook revenue is clamped at zero).
-- Idempotent: floor(x·10⁴ + 0.5) of an already nudged amount is the same
-- integer, so a rerun after a crash writes the same values.
-- A mutation: warehouse.Migrate waits for it to finish before 0411.
ALTER TABLE {db}.orders {on_cluster} UPDATE
    revenue = floor(revenue * 10000 + 0.5) / 10000 + 0.00004,
    cost = floor(cost * 10000 + 0.5) / 10000 + 0.00004,
    line_prices = arrayMap(p -> floor(p * 10000 + 0.5) / 10000 + 0.00004, line_prices)
WHERE 1
