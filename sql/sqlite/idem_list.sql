-- sql/sqlite/idem_list.sql — idempotency records for `dblock idempotency list`, most recently
-- changed first, without bodies. $1 status or '' for all, $2 scope or '' for all, $3 1 =
-- include records past retention, $4 row limit. Columns as idem_get without the body.
SELECT scope, idem_key, fingerprint, status, owner, attempt, recovery_point, response_code,
       COALESCE(length(response_body) / 2, 0) AS body_bytes,
       created_at AS created_at_ms,
       updated_at AS updated_at_ms,
       expires_at AS expires_at_ms,
       lease_expires_at AS lease_expires_at_ms,
       CASE WHEN status = 'in_progress'
            THEN MAX(0, COALESCE(lease_expires_at, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)) - CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))
       END AS lease_remaining_ms,
       CASE WHEN expires_at <= CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) THEN 1 ELSE 0 END AS expired
  FROM dblock_idempotency
 WHERE ($1 = '' OR status = $1)
   AND ($2 = '' OR scope = $2)
   AND ($3 = 1 OR expires_at > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))
 ORDER BY updated_at DESC, scope, idem_key
 LIMIT $4
