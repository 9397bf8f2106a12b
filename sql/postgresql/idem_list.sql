-- sql/postgresql/idem_list.sql — idempotency records for `dblock idempotency list`, most
-- recently changed first, without bodies. $1 status or '' for all, $2 scope or '' for all,
-- $3 1 = include records past retention, $4 row limit. Columns as idem_get without the body.
SELECT scope, idem_key, fingerprint, status, owner, attempt, recovery_point, response_code,
       COALESCE(octet_length(response_body), 0) AS body_bytes,
       CAST(floor(EXTRACT(EPOCH FROM created_at) * 1000) AS bigint) AS created_at_ms,
       CAST(floor(EXTRACT(EPOCH FROM updated_at) * 1000) AS bigint) AS updated_at_ms,
       CAST(floor(EXTRACT(EPOCH FROM expires_at) * 1000) AS bigint) AS expires_at_ms,
       CAST(floor(EXTRACT(EPOCH FROM lease_expires_at) * 1000) AS bigint) AS lease_expires_at_ms,
       CASE WHEN status = 'in_progress'
            THEN GREATEST(0, CAST(ceil(EXTRACT(EPOCH FROM (COALESCE(lease_expires_at, now()) - now())) * 1000) AS bigint))
       END AS lease_remaining_ms,
       CASE WHEN expires_at <= now() THEN 1 ELSE 0 END AS expired
  FROM dblock_idempotency
 WHERE (CAST($1 AS text) = '' OR status = CAST($1 AS text))
   AND (CAST($2 AS text) = '' OR scope = CAST($2 AS text))
   AND (CAST($3 AS integer) = 1 OR expires_at > now())
 ORDER BY updated_at DESC, scope, idem_key
 LIMIT CAST($4 AS bigint)
