-- sql/postgresql/idem_get.sql — one idempotency record, for get() and `dblock idempotency show`.
-- $1 scope, $2 key. Times as ms since the Unix epoch (server clock); expired = 1 when past
-- retention (every other statement treats it as absent). Body as hex in the last column.
SELECT scope, idem_key, fingerprint, status, owner, attempt, recovery_point, response_code,
       COALESCE(octet_length(response_body), 0) AS body_bytes,
       CAST(floor(EXTRACT(EPOCH FROM created_at) * 1000) AS bigint) AS created_at_ms,
       CAST(floor(EXTRACT(EPOCH FROM updated_at) * 1000) AS bigint) AS updated_at_ms,
       CAST(floor(EXTRACT(EPOCH FROM expires_at) * 1000) AS bigint) AS expires_at_ms,
       CAST(floor(EXTRACT(EPOCH FROM lease_expires_at) * 1000) AS bigint) AS lease_expires_at_ms,
       CASE WHEN status = 'in_progress'
            THEN GREATEST(0, CAST(ceil(EXTRACT(EPOCH FROM (COALESCE(lease_expires_at, now()) - now())) * 1000) AS bigint))
       END AS lease_remaining_ms,
       CASE WHEN expires_at <= now() THEN 1 ELSE 0 END AS expired,
       encode(response_body, 'hex') AS response_body
  FROM dblock_idempotency
 WHERE scope = CAST($1 AS text) AND idem_key = CAST($2 AS text)
