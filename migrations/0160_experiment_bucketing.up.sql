-- How the tracker buckets a test's visitors (web/tracker/lift.js). Scheme 1
-- is FNV-1a of "visitor:test" alone: its last bytes mix poorly, so two tests
-- running together split the same visitors in step (P(same group) far from
-- one half). Scheme 2 finishes the hash with murmur3's fmix32. A test keeps
-- the scheme it started with, because changing it would move running
-- visitors between groups; tests not yet started take scheme 2.
ALTER TABLE experiments ADD COLUMN bucketing smallint NOT NULL DEFAULT 1;
UPDATE experiments SET bucketing = 2 WHERE started_at IS NULL;
ALTER TABLE experiments ALTER COLUMN bucketing SET DEFAULT 2;
