-- Inbound platform webhook deliveries, one row per delivery id and shop. The
-- row is the dedupe record (a redelivered id is not processed twice) and
-- keeps the raw body, so the asynchronous job reads what was signed.
CREATE TABLE webhook_deliveries (
    shop_id      bigint NOT NULL REFERENCES shops (id),
    id           text NOT NULL,
    topic        text NOT NULL,
    body         bytea NOT NULL,
    received_at  timestamptz NOT NULL,
    processed_at timestamptz,
    outcome      text NOT NULL DEFAULT '',
    PRIMARY KEY (shop_id, id)
);

-- Warnings a webhook raised on a test (e.g. a theme test whose theme is no
-- longer the published one). One per test and code; results snapshots show
-- them until the condition is resolved.
CREATE TABLE experiment_warnings (
    experiment_id bigint NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
    shop_id       bigint NOT NULL REFERENCES shops (id),
    code          text NOT NULL,
    message       text NOT NULL,
    param         text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL,
    PRIMARY KEY (experiment_id, code)
);
CREATE INDEX experiment_warnings_shop ON experiment_warnings (shop_id);

-- The last inventory level the platform reported per item and location
-- (INVENTORY_LEVELS_UPDATE).
CREATE TABLE inventory_levels (
    shop_id           bigint NOT NULL REFERENCES shops (id),
    inventory_item_id text NOT NULL,
    location_id       text NOT NULL,
    available         bigint,
    updated_at        timestamptz NOT NULL,
    PRIMARY KEY (shop_id, inventory_item_id, location_id)
);
