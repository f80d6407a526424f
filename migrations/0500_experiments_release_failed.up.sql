-- The release sweep also lists failed tests: a launch that failed partway
-- leaves the duplicate variants it made, and a test that stays failed
-- (never restarted, never archived) kept them until uninstall. The
-- partial index follows the sweep's new status list; a test started again
-- loses its platform_released_at (store.saveTest), so its next end is
-- released too.
DROP INDEX IF EXISTS experiments_release_due;
CREATE INDEX experiments_release_due ON experiments (id)
    WHERE platform_released_at IS NULL AND status IN ('ended', 'archived', 'failed');
