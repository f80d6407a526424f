-- Export files are deleted exports.retention after they complete (the
-- worker's hourly housekeeping, results.Service.ExpireExports). The row is
-- marked expired first and keeps its file's name until the file is gone, so
-- a crash between the two leaves a row nobody can download whose file the
-- next run deletes, never a completed row without its file.
ALTER TABLE exports DROP CONSTRAINT exports_status_check;
ALTER TABLE exports ADD CONSTRAINT exports_status_check
    CHECK (status IN ('pending', 'running', 'completed', 'failed', 'expired'));
ALTER TABLE exports ADD COLUMN expired_at timestamptz;
-- What each run looks for: completed exports by age, expired ones whose
-- file is not deleted yet (a handful at most).
CREATE INDEX exports_completed_at ON exports (completed_at) WHERE status = 'completed';
CREATE INDEX exports_expired_files ON exports (id) WHERE status = 'expired' AND file <> '';
