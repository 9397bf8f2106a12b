-- sql/mysql/idem_get.sql — one idempotency record, for get() and `dblock idempotency show`.
-- $1 scope, $2 key. Times as ms since the Unix epoch (DATETIME(6) columns hold UTC);
-- expired = 1 when past retention (every other statement treats it as absent). Body as hex
-- in the last column.
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
       CASE WHEN expires_at <= UTC_TIMESTAMP(6) THEN 1 ELSE 0 END AS expired,
       HEX(response_body) AS response_body
  FROM dblock_idempotency
 WHERE scope = $1 AND idem_key = $2
