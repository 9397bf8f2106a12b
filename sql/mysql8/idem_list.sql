-- sql/mysql/idem_list.sql — idempotency records for `dblock idempotency list`, most recently
-- changed first, without bodies. $1 status or '' for all, $2 scope or '' for all, $3 1 =
-- include records past retention, $4 row limit. Columns as idem_get without the body.
SELECT scope, idem_key, fingerprint, status, owner, attempt, recovery_point, response_code,
       COALESCE(LENGTH(response_body), 0) AS body_bytes,
       TIMESTAMPDIFF(MICROSECOND, DATE '1970-01-01', created_at) DIV 1000 AS created_at_ms,
       TIMESTAMPDIFF(MICROSECOND, DATE '1970-01-01', updated_at) DIV 1000 AS updated_at_ms,
       TIMESTAMPDIFF(MICROSECOND, DATE '1970-01-01', expires_at) DIV 1000 AS expires_at_ms,
       TIMESTAMPDIFF(MICROSECOND, DATE '1970-01-01', lease_expires_at) DIV 1000 AS lease_expires_at_ms,
       CASE WHEN status = 'in_progress'
            THEN GREATEST(0, CEIL(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6),
                                                COALESCE(lease_expires_at, UTC_TIMESTAMP(6))) / 1000))
       END AS lease_remaining_ms,
       CASE WHEN expires_at <= UTC_TIMESTAMP(6) THEN 1 ELSE 0 END AS expired
  FROM dblock_idempotency
 WHERE ($1 = '' OR status = $1)
   AND ($2 = '' OR scope = $2)
   AND ($3 = 1 OR expires_at > UTC_TIMESTAMP(6))
 ORDER BY updated_at DESC, scope, idem_key
 LIMIT $4
