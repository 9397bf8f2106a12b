-- Rolls back the open transaction.
ROLLBACK
