-- Results snapshots (contract §2.8): one row per computation of a test's
-- whole-run results, the latest served by GET /v1/experiments/{id}/results.
-- body is the snapshot exactly as served (json keeps its text); summary is
-- the test's results_summary. final marks the one taken when the test ended.
CREATE TABLE results_snapshots (
    id            bigserial PRIMARY KEY,
    shop_id       bigint NOT NULL REFERENCES shops (id),
    experiment_id bigint NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
    computed_at   timestamptz NOT NULL,
    final         boolean NOT NULL DEFAULT false,
    body          json NOT NULL,
    summary       json NOT NULL
);
CREATE INDEX results_snapshots_latest ON results_snapshots (experiment_id, computed_at DESC);

-- Custom result queries (contract §2.9). spec is the normalized request and
-- spec_key its canonical text, so a repeat of the same query within the hour
-- reuses a completed computation. body holds the result fields once
-- completed; failure_reason says in plain language why one failed.
CREATE TABLE results_queries (
    id             text PRIMARY KEY,
    shop_id        bigint NOT NULL REFERENCES shops (id),
    experiment_id  bigint NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
    spec           json NOT NULL,
    spec_key       text NOT NULL,
    status         text NOT NULL CHECK (status IN ('pending', 'completed', 'failed')),
    failure_reason text NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL,
    computed_at    timestamptz,
    body           json
);
CREATE INDEX results_queries_reuse ON results_queries (experiment_id, spec_key, computed_at DESC) WHERE status = 'completed';
