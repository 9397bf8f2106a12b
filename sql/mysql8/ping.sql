-- Liveness check: one round trip.
SELECT 1
