-- Variants by product: validation looks a product's variants up this way,
-- and so does the foreign key to catalog_products when an install or a
-- catalog refresh replaces a mirror: without the index every deleted
-- product scanned the shop's variants, and replacing a mirror of 5,000
-- products and 25,000 variants took 5.1 s of the write's 10 s.
CREATE INDEX catalog_variants_product ON catalog_variants (shop_id, product_id);
-- The same for a delivery zone's rates, deleted with their zone.
CREATE INDEX catalog_delivery_rates_zone ON catalog_delivery_rates (shop_id, zone_id);
