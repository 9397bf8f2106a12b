-- sql/postgresql/idem_claim.sql — idempotency begin() and run_once() claim, one round trip.
-- $1 scope, $2 key, $3 fingerprint (SHA-256, lower-case hex), $4 owner token of the new
-- attempt, $5 lease in ms, $6 retention in ms.
--
-- ins  - a new key is inserted as attempt 1 (a concurrent, uncommitted insert of the same
--        key makes this wait for that transaction, so a duplicate of a run_once() waits for
--        its commit or rollback).
-- upd  - a record past its retention (treated as absent) starts over as attempt 1, and an
--        in_progress record with the SAME fingerprint whose lease has run out (or that a
--        retryable failure reopened, lease NULL) is taken over as attempt N+1, keeping its
--        recovery point. A row changed meanwhile by another transaction is re-checked
--        against this WHERE before it is updated.
-- else - nothing is written and no row is locked - the record is read back. The
--        fingerprint is compared on this conflict path too (mismatch).
--
-- One row out, integer and text columns only
--   outcome         started | replay | in_progress | mismatch
--   status          in_progress | completed | failed
--   attempt         the record's attempt number (yours when started)
--   recovery_point  last checkpoint (started after a takeover or reopen)
--   response_code   replay only
--   response_body   replay only, hex
--   retry_after_ms  in_progress only, time left on the other attempt's lease
-- No row at all happens when a concurrent transaction committed the conflicting row after
-- this statement's snapshot was taken (the SELECT cannot see it yet) - run it again.
WITH ins AS (
  INSERT INTO dblock_idempotency
    (scope, idem_key, fingerprint, status, owner, attempt, lease_expires_at, recovery_point,
     response_code, response_body, created_at, updated_at, expires_at)
  VALUES (CAST($1 AS text), CAST($2 AS text), CAST($3 AS text), 'in_progress', CAST($4 AS text), 1,
          now() + CAST($5 AS bigint) * interval '1 millisecond', NULL, NULL, NULL, now(), now(),
          now() + CAST($6 AS bigint) * interval '1 millisecond')
  ON CONFLICT (scope, idem_key) DO NOTHING
  RETURNING CAST('started' AS text) AS outcome, CAST(status AS text) AS status, attempt,
            CAST(recovery_point AS text) AS recovery_point, CAST(NULL AS integer) AS response_code,
            CAST(NULL AS text) AS response_body, CAST(0 AS bigint) AS retry_after_ms
), upd AS (
  UPDATE dblock_idempotency r
     SET fingerprint      = CAST($3 AS text),
         status           = 'in_progress',
         owner            = CAST($4 AS text),
         attempt          = CASE WHEN r.expires_at <= now() THEN 1 ELSE r.attempt + 1 END,
         lease_expires_at = now() + CAST($5 AS bigint) * interval '1 millisecond',
         recovery_point   = CASE WHEN r.expires_at <= now() THEN NULL ELSE r.recovery_point END,
         response_code    = NULL,
         response_body    = NULL,
         created_at       = CASE WHEN r.expires_at <= now() THEN now() ELSE r.created_at END,
         updated_at       = now(),
         expires_at       = now() + CAST($6 AS bigint) * interval '1 millisecond'
   WHERE r.scope = CAST($1 AS text) AND r.idem_key = CAST($2 AS text)
     AND NOT EXISTS (SELECT 1 FROM ins)
     AND (r.expires_at <= now()
          OR (r.status = 'in_progress' AND r.fingerprint = CAST($3 AS text)
              AND (r.lease_expires_at IS NULL OR r.lease_expires_at <= now())))
  RETURNING CAST('started' AS text), CAST(r.status AS text), r.attempt, CAST(r.recovery_point AS text),
            CAST(NULL AS integer), CAST(NULL AS text), CAST(0 AS bigint)
)
SELECT outcome, status, attempt, recovery_point, response_code, response_body, retry_after_ms FROM ins
UNION ALL
SELECT * FROM upd
UNION ALL
SELECT CASE WHEN i.fingerprint <> CAST($3 AS text) THEN 'mismatch'
            WHEN i.status = 'in_progress' THEN 'in_progress'
            ELSE 'replay' END,
       CAST(i.status AS text),
       i.attempt,
       CAST(i.recovery_point AS text),
       CASE WHEN i.fingerprint = CAST($3 AS text) AND i.status <> 'in_progress' THEN i.response_code END,
       CASE WHEN i.fingerprint = CAST($3 AS text) AND i.status <> 'in_progress'
            THEN encode(i.response_body, 'hex') END,
       CASE WHEN i.status = 'in_progress' AND i.lease_expires_at IS NOT NULL
            THEN GREATEST(0, CAST(ceil(EXTRACT(EPOCH FROM (i.lease_expires_at - now())) * 1000) AS bigint))
            ELSE 0 END
  FROM dblock_idempotency i
 WHERE i.scope = CAST($1 AS text) AND i.idem_key = CAST($2 AS text) AND i.expires_at > now()
   AND NOT EXISTS (SELECT 1 FROM ins) AND NOT EXISTS (SELECT 1 FROM upd)
