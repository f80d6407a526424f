-- Feeds agg_product_activity from every insert into page_views.
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.agg_product_activity_page_views {on_cluster}
TO {db}.agg_product_activity AS
SELECT shop_id, experiment_id, visitor_id, session_id, toStartOfFifteenMinutes(viewed_at) AS bucket, is_bot,
    product_id, toUInt64(0) AS added_to_cart, toUInt64(0) AS checkouts_started, toUInt64(0) AS product_views,
    toUInt64(count()) AS page_views
FROM {db}.page_views
GROUP BY shop_id, experiment_id, visitor_id, session_id, bucket, is_bot, product_id
