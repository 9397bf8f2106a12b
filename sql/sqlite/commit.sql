-- Commits the open transaction.
COMMIT
