-- Whether a delivery zone offers Lift's carrier service ("Lift rates"):
-- the platform asks Lift for a zone's rates only then, so a shipping test
-- on any other zone changes nothing buyers see. Read from the platform's
-- delivery profiles at install and at each catalog refresh; a catalog
-- file says it with delivery_zones[].lift_rates.
ALTER TABLE catalog_delivery_zones ADD COLUMN lift_rates boolean NOT NULL DEFAULT false;
