-- Signed orders always win over the legacy endpoint. Rows written from a
-- signed ORDERS_* webhook carry the signed priority in the top bits of their
-- version (2^62 + Unix ms of the order's update; warehouse.SignedOrderVersion),
-- while the unauthenticated POST /api/analytics/order writes its receipt time
-- in ms, far below 2^62. ReplacingMergeTree(version) and every
-- argMax(…, version) therefore keep a signed row over any legacy one,
-- whatever arrived last, and keep the latest among rows of one kind: the
-- table and its queries stay as they are.
--
-- This step gives the webhook rows written before the priority existed their
-- signed version: a copy with the priority bit, which folds over the old row.
-- Running it twice writes identical copies, which fold too.
INSERT INTO {db}.orders (shop_id, experiment_id, order_id, version, test_group, visitor_id,
    session_id, revenue, cost, currency, line_product_ids, line_variant_ids, line_quantities, line_prices,
    created_at, source, is_bot)
SELECT shop_id, experiment_id, order_id, version + 4611686018427387904, test_group, visitor_id,
    session_id, revenue, cost, currency, line_product_ids, line_variant_ids, line_quantities, line_prices,
    created_at, source, is_bot
FROM {db}.orders
WHERE source = 'webhook' AND version < 4611686018427387904
