-- Shops that installed Lift, with what their plan lets them do.
CREATE TABLE shops (
    id                   bigserial PRIMARY KEY,
    domain               text NOT NULL UNIQUE,
    name                 text NOT NULL DEFAULT '',
    timezone             text NOT NULL DEFAULT 'UTC',
    currency             text NOT NULL DEFAULT 'USD',
    api_enabled          boolean NOT NULL DEFAULT false,
    plan                 text NOT NULL DEFAULT 'growth',
    features             text[] NOT NULL DEFAULT '{}',
    subscription_active  boolean NOT NULL DEFAULT true,
    billing_cap_reached  boolean NOT NULL DEFAULT false,
    allowance_exhausted  boolean NOT NULL DEFAULT false,
    annual_billing       boolean NOT NULL DEFAULT false,
    raised_product_limit boolean NOT NULL DEFAULT false,
    carrier_service      boolean NOT NULL DEFAULT false,
    installed_at         timestamptz NOT NULL DEFAULT now(),
    uninstalled_at       timestamptz,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now()
);

-- Public API tokens. Only the SHA-256 of the secret is kept.
CREATE TABLE api_tokens (
    id          bigserial PRIMARY KEY,
    shop_id     bigint NOT NULL REFERENCES shops (id),
    secret_hash bytea NOT NULL UNIQUE,
    scope       text NOT NULL CHECK (scope IN ('read_experiments', 'write_experiments')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);
CREATE INDEX api_tokens_shop ON api_tokens (shop_id);

-- Idempotency-Key claims. A claim is 'running' until the request finishes;
-- the write that the request performs completes it in its own transaction, so
-- a retry can never perform the write twice.
CREATE TABLE idempotency_keys (
    shop_id         bigint NOT NULL REFERENCES shops (id),
    key             text NOT NULL,
    request_hash    bytea NOT NULL,
    state           text NOT NULL CHECK (state IN ('running', 'completed')),
    response_status integer,
    response_body   bytea,
    claimed_at      timestamptz NOT NULL,
    completed_at    timestamptz,
    PRIMARY KEY (shop_id, key)
);
CREATE INDEX idempotency_keys_claimed ON idempotency_keys (claimed_at);

-- Every write, recorded in the transaction of the write itself.
CREATE TABLE audit_log (
    id            bigserial PRIMARY KEY,
    shop_id       bigint NOT NULL,
    actor         text NOT NULL,
    token_id      bigint,
    action        text NOT NULL,
    resource_type text NOT NULL,
    resource_id   text NOT NULL DEFAULT '',
    request_id    text NOT NULL DEFAULT '',
    method        text NOT NULL DEFAULT '',
    path          text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL
);
CREATE INDEX audit_log_shop ON audit_log (shop_id, created_at);
