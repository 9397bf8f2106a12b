-- dblock schema 0008 (placeholder): reserved for the read-write lock and semaphore schema step,
-- which replaces this file; nothing to do here.
DO 0;
