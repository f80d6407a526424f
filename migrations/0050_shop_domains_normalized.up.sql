-- Shop domains are stored in one spelling (experiment.NormalizeShopDomain:
-- trimmed, lower case, no trailing dot), so "Shop.myshopify.com" and
-- "shop.myshopify.com" are one shop. Rows written before are rewritten. Where
-- two rows only differ in spelling the normalised one is the shop every
-- lookup finds; the other keeps its spelling (merging two shops' tests and
-- tokens is not a migration's call) and is reported by this query:
--   SELECT id, domain FROM shops WHERE domain <> lower(rtrim(btrim(domain), '.'));
UPDATE shops s
SET domain = lower(rtrim(btrim(s.domain), '.'))
WHERE s.domain <> lower(rtrim(btrim(s.domain), '.'))
  AND NOT EXISTS (SELECT 1 FROM shops o WHERE o.id <> s.id AND o.domain = lower(rtrim(btrim(s.domain), '.')))
  AND s.id = (SELECT min(d.id) FROM shops d WHERE lower(rtrim(btrim(d.domain), '.')) = lower(rtrim(btrim(s.domain), '.')));
