-- Fenced write: after an UPDATE that counted 0 rows on a connection without
-- CLIENT_FOUND_ROWS (a caller's Connector/C++ connection), tells "matched but already
-- had these values" (1) from "rejected" (0). A locking read: it sees the latest row.
SELECT COUNT(*) FROM {table} WHERE {key} = $1 AND ({fence} IS NULL OR {fence} <= $2) FOR UPDATE
