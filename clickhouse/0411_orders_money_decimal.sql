-- Money as exact decimals (issue 17), step 2 of 2: order amounts become
-- Decimal(18,4). Four decimals fit every ISO 4217 exponent (CLF and UYW
-- have 4; JPY 0, KWD 3) and 14 integer digits hold any order. Writers send
-- shopspring decimals (package money); readers that feed the statistics
-- read toFloat64(…). MODIFY COLUMN keeps the column names, so every query
-- and the 0400 copy stay as they are, and it converts the rows in place on
-- 18.16 and on current ClickHouse (checked on both with data, after 0410).
ALTER TABLE {db}.orders {on_cluster}
    MODIFY COLUMN revenue Decimal(18, 4),
    MODIFY COLUMN cost Decimal(18, 4),
    MODIFY COLUMN line_prices Array(Decimal(18, 4))
