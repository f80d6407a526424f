-- The shop's analytics-vendor measurement id (e.g. a GA4 "G-…" id). Empty
-- means the analytics feature is off: GET /api/ga4/metadata answers found=false.
ALTER TABLE shops ADD COLUMN analytics_measurement_id text NOT NULL DEFAULT '';
