-- Inside a grant's transaction, after holders_gate.sql: deletes the holds of name $1 that
-- expired (their lease plus its lock delay ran out on the server's clock): takeover. A live
-- row is never touched (its holder's renewal keeps expires_at in the future).
-- Through the primary key (FORCE INDEX): found through the expires_at index, the delete would
-- lock index entries before their primary records, the opposite of a release
-- (holders_release.sql: the primary record, then its index entries), and the two could
-- deadlock with the release as InnoDB's victim. The multiple-table form takes the hint.
DELETE h FROM dblock_lock_holders h FORCE INDEX (PRIMARY) WHERE h.name = $1 AND h.expires_at <= UTC_TIMESTAMP(6)
