-- Tests (the wire calls them experiments) and their groups. Shared config,
-- audience and group content are JSONB in the documented per-type schema
-- (docs/tests-api.md); the domain package validates them before they land.
CREATE TABLE experiments (
    id                     bigserial PRIMARY KEY,
    shop_id                bigint NOT NULL REFERENCES shops (id),
    type                   text NOT NULL,
    status                 text NOT NULL CHECK (status IN ('draft', 'preview', 'active', 'paused', 'ended', 'failed', 'archived')),
    name                   text NOT NULL,
    hypothesis             text,
    primary_metric         text,
    traffic_allocation     integer NOT NULL DEFAULT 100,
    shared                 jsonb NOT NULL DEFAULT '{}',
    audience               jsonb,
    schedule_start_at      timestamptz,
    schedule_end_at        timestamptz,
    has_force_assign_rules boolean NOT NULL DEFAULT false,
    assignment_version     integer NOT NULL DEFAULT 1,
    product_group_id       text,
    product_group_name     text,
    checks_pending         boolean NOT NULL DEFAULT false,
    failure_reason         text NOT NULL DEFAULT '',
    created_at             timestamptz NOT NULL,
    updated_at             timestamptz NOT NULL,
    started_at             timestamptz,
    ended_at               timestamptz
);
-- The list reads newest first per shop, continuing from a cursor.
CREATE INDEX experiments_shop_created ON experiments (shop_id, created_at DESC, id DESC);
-- The scheduler looks for due starts and ends.
CREATE INDEX experiments_due_start ON experiments (schedule_start_at) WHERE status IN ('draft', 'preview');
CREATE INDEX experiments_due_end ON experiments (schedule_end_at) WHERE status IN ('active', 'paused');

CREATE TABLE test_groups (
    experiment_id bigint NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
    idx           integer NOT NULL,
    name          text NOT NULL,
    split         integer NOT NULL,
    content       jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (experiment_id, idx)
);
