-- When the platform resources a test's launches made (its duplicate
-- variants, its offer's discount) were removed, some time after the test
-- ended (experiment.Service.ReleaseEnded). The hourly sweep lists the
-- ended and archived tests still without it.
ALTER TABLE experiments ADD COLUMN platform_released_at timestamptz;
CREATE INDEX experiments_release_due ON experiments (id)
    WHERE platform_released_at IS NULL AND status IN ('ended', 'archived');
