-- Final release of lease lock $1 by owner $2, grant $3 (its fence): deletes the row and,
-- in the same statement, sends NOTIFY dblock_release with the name so waiters wake at once
-- (delivered only if the statement commits). No row back = it was no longer ours. The fence
-- makes a stale lease (lost, then the name granted to the same session again) fail to
-- release instead of deleting the newer grant.
-- The notification is sent from RETURNING, which runs only for the deleted row (4-5 us of
-- server CPU less than the former CTE with a LATERAL join); its void result is cast to
-- text for client libraries that cannot read void (SOCI).
DELETE FROM dblock_locks WHERE name = $1 AND owner = $2 AND fence = $3
RETURNING 0 AS holds, CAST(pg_notify('dblock_release', name) AS text) AS notified
