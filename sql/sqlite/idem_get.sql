-- sql/sqlite/idem_get.sql — one idempotency record, for get() and `dblock idempotency show`.
-- $1 scope, $2 key. Times as ms since the Unix epoch (SQLite's clock); expired = 1 when
-- past retention (every other statement treats it as absent). Body as hex in the last
-- column (stored as hex text, see idem_finish.sql).
SELECT scope, idem_key, fingerprint, status, owner, attempt, recovery_point, response_code,
       COALESCE(length(response_body) / 2, 0) AS body_bytes,
       created_at AS created_at_ms,
       updated_at AS updated_at_ms,
       expires_at AS expires_at_ms,
       lease_expires_at AS lease_expires_at_ms,
       CASE WHEN status = 'in_progress'
            THEN MAX(0, COALESCE(lease_expires_at, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)) - CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))
       END AS lease_remaining_ms,
       CASE WHEN expires_at <= CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) THEN 1 ELSE 0 END AS expired,
       CAST(response_body AS TEXT) AS response_body
  FROM dblock_idempotency
 WHERE scope = $1 AND idem_key = $2
