-- Analysis options and guardrails of a test (experiment/analysis.go), and why
-- Lift paused it by itself. Options change how results are read, never what a
-- visitor sees. The audit log records the reason of a write no person asked
-- for (an automatic pause).
ALTER TABLE experiments
    ADD COLUMN analysis     jsonb NOT NULL DEFAULT '{"sequential": false, "cuped": false, "winsorize": 0.99, "correction": "none", "prior": null}',
    ADD COLUMN guardrails   jsonb NOT NULL DEFAULT '[]',
    ADD COLUMN pause_reason text  NOT NULL DEFAULT '';
ALTER TABLE audit_log ADD COLUMN reason text NOT NULL DEFAULT '';
