-- Row guard on SQLite: there are no row locks. Inside BEGIN IMMEDIATE the transaction
-- already holds the database's single writer lock, so every row is as good as locked
-- against other writers; this only tells whether rows with key $1 exist. Every wait
-- mode (wait, NOWAIT, SKIP LOCKED, bounded) runs this same statement.
SELECT 1 FROM {table} WHERE {key} = $1
