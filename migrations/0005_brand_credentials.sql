-- brand_credentials: the BigQuery service-account key a brand's queries are signed with, sealed (AES-256-GCM)
-- under the key-encryption secret CREDENTIALS_KEY (src/warehouse/credential-seal.ts). One row per brand that
-- has its own account; a brand without a row uses GCP_SERVICE_ACCOUNTS_BY_BRAND or GCP_SERVICE_ACCOUNT_JSON.
-- client_email and private_key_id are kept in clear so `brand credentials show` can name the account without
-- any secret; the private key exists only inside ciphertext. key_id names the secret that sealed the row (not
-- the secret): rows under an older key are re-sealed by `brand credentials re-encrypt`.
-- Written by the admin CLI (`brand credentials set|clear|re-encrypt`); read by the Worker per brand.
CREATE TABLE IF NOT EXISTS brand_credentials (
  brand_id        TEXT PRIMARY KEY REFERENCES brands(id) ON DELETE CASCADE,
  client_email    TEXT NOT NULL,
  private_key_id  TEXT NOT NULL,
  key_id          TEXT NOT NULL,             -- 16 hex digits derived from the sealing secret
  iv              TEXT NOT NULL,             -- base64, 12 bytes
  ciphertext      TEXT NOT NULL,             -- base64 of AES-GCM output (tag appended) of the key's JSON
  updated_at      INTEGER NOT NULL
);
