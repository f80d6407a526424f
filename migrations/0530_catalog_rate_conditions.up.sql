-- A zone rate's conditions (the platform's method conditions): the cart
-- subtotal and weight it is offered for, bounds included; NULL and 0 are
-- no bound. Without them Lift's carrier service offered every rate of a
-- zone to every cart: "free shipping from 75" to a cart of 20.
ALTER TABLE catalog_delivery_rates
    ADD COLUMN min_subtotal numeric,
    ADD COLUMN max_subtotal numeric,
    ADD COLUMN min_grams bigint NOT NULL DEFAULT 0,
    ADD COLUMN max_grams bigint NOT NULL DEFAULT 0;
