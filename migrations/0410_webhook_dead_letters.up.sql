-- Webhook deliveries whose processing kept failing (a poison body the stores
-- refuse, a topic effect that always errors). After a bounded number of tries
-- the worker keeps the delivery here with its last error and marks it
-- processed, so it is never retried again but can still be inspected and
-- replayed. body is bytea, so whatever was signed fits; last_error is text
-- cleaned of NUL and invalid UTF-8 by the writer.
CREATE TABLE webhook_dead_letters (
    shop_id     bigint NOT NULL REFERENCES shops (id),
    webhook_id  text NOT NULL,
    topic       text NOT NULL,
    body        bytea NOT NULL,
    last_error  text NOT NULL,
    tries       integer NOT NULL,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (shop_id, webhook_id)
);
