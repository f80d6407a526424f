-- CSV exports of a test's orders (POST /v1/experiments/{id}/exports). The
-- file lives under data_dir/exports/; row_count and completed_at are set when
-- the job finishes.
CREATE TABLE exports (
    id            text PRIMARY KEY,
    shop_id       bigint NOT NULL REFERENCES shops (id),
    experiment_id bigint NOT NULL REFERENCES experiments (id),
    status        text NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed')),
    row_count     bigint,
    file          text NOT NULL DEFAULT '',
    failure       text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL,
    started_at    timestamptz,
    completed_at  timestamptz
);
CREATE INDEX exports_shop ON exports (shop_id, created_at DESC);
