-- The catalog mirror that validation reads: what each shop sells and how it
-- ships. Amounts are numeric without a scale so "19.90" reads back as written.
CREATE TABLE catalog_products (
    shop_id bigint NOT NULL REFERENCES shops (id),
    id      text NOT NULL,
    title   text NOT NULL,
    handle  text NOT NULL DEFAULT '',
    PRIMARY KEY (shop_id, id)
);

CREATE TABLE catalog_variants (
    shop_id    bigint NOT NULL REFERENCES shops (id),
    id         text NOT NULL,
    product_id text NOT NULL,
    title      text NOT NULL DEFAULT '',
    sku        text NOT NULL DEFAULT '',
    price      numeric NOT NULL,
    cost       numeric,
    PRIMARY KEY (shop_id, id),
    FOREIGN KEY (shop_id, product_id) REFERENCES catalog_products (shop_id, id) ON DELETE CASCADE
);

CREATE TABLE catalog_collections (
    shop_id     bigint NOT NULL REFERENCES shops (id),
    id          text NOT NULL,
    title       text NOT NULL,
    product_ids text[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (shop_id, id)
);

CREATE TABLE catalog_themes (
    shop_id   bigint NOT NULL REFERENCES shops (id),
    id        text NOT NULL,
    name      text NOT NULL,
    role      text NOT NULL DEFAULT 'unpublished',
    templates text[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (shop_id, id)
);

CREATE TABLE catalog_delivery_zones (
    shop_id   bigint NOT NULL REFERENCES shops (id),
    id        text NOT NULL,
    name      text NOT NULL,
    countries text[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (shop_id, id)
);

CREATE TABLE catalog_delivery_rates (
    shop_id bigint NOT NULL REFERENCES shops (id),
    id      text NOT NULL,
    zone_id text NOT NULL,
    name    text NOT NULL,
    price   numeric NOT NULL,
    PRIMARY KEY (shop_id, id),
    FOREIGN KEY (shop_id, zone_id) REFERENCES catalog_delivery_zones (shop_id, id) ON DELETE CASCADE
);

CREATE TABLE catalog_markets (
    shop_id   bigint NOT NULL REFERENCES shops (id),
    id        text NOT NULL,
    name      text NOT NULL,
    currency  text NOT NULL,
    countries text[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (shop_id, id)
);
