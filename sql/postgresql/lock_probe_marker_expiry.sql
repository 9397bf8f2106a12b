-- lock_probe_marker.sql for a try that reports no holder (try_acquire): the row of lease
-- lock $1 only if another owner than $2 holds it live, with only what the caller decides
-- from: fence (a takeover of a gone holder names the grant), expires_in_ms, owner (the
-- client reads the marker flag and window code from the token: 'm' and one digit), and
--   gone: 1 when the holder is marker-backed and its marker is free, tried as in
--         lock_probe_marker.sql (a transaction-scoped advisory lock, only for 'm' owners).
-- No holder text, no hold count, no formatted expiry. No tuple locked, no transaction id,
-- no WAL.
SELECT fence,
       CAST(floor(date_part('epoch', expires_at - now()) * 1000) AS bigint) AS expires_in_ms,
       owner,
       CASE WHEN left(owner, 1) <> 'm' THEN 0
            WHEN pg_try_advisory_xact_lock(1684171887, hashtext(owner)) THEN 1
            ELSE 0 END AS gone
  FROM dblock_locks
 WHERE name = $1 AND owner <> $2 AND expires_at > now()
