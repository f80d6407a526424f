-- The install lifecycle (issue 13, docs/install.md). A shop installed
-- through the platform's OAuth keeps its permanent access token sealed with
-- AES-256-GCM (platform.token_key): the column holds nonce || ciphertext,
-- never the plaintext. The granted scopes and the webhook subscriptions
-- Lift registered are kept beside it; an uninstall clears all three.
ALTER TABLE shops
    ADD COLUMN access_token_sealed   bytea,
    ADD COLUMN access_scopes         text[] NOT NULL DEFAULT '{}',
    ADD COLUMN webhook_subscriptions jsonb NOT NULL DEFAULT '[]';

-- OAuth state nonces: issued by GET /api/auth, consumed once by the
-- callback. Expired rows are deleted as new ones are issued.
CREATE TABLE install_states (
    nonce      text PRIMARY KEY,
    domain     text NOT NULL,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX install_states_expires ON install_states (expires_at);
