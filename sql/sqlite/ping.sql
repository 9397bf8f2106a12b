-- Liveness check.
SELECT 1
