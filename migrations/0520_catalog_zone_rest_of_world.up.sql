-- A "rest of world" delivery zone lists no countries: it ships to every
-- country no other zone lists. Without the mark a destination there got no
-- rates from Lift's carrier service, and a merchant who handed that zone
-- to Lift rates would have buyers who could not check out.
ALTER TABLE catalog_delivery_zones ADD COLUMN rest_of_world boolean NOT NULL DEFAULT false;
