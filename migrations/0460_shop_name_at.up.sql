-- When the platform set the shop's name that Lift keeps (SHOP_UPDATE's
-- updated_at, else the delivery's receipt). Deliveries run as concurrent
-- jobs and the platform retries failed ones later, so an older rename can
-- be processed after a newer one; it is ignored instead of bringing the old
-- name back (the lifecycle audit's L5). NULL: not set by a delivery yet.
ALTER TABLE shops ADD COLUMN name_at timestamptz;
