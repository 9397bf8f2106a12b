-- Opens a write transaction at once: a deferred BEGIN lets two read-then-write
-- transactions deadlock (one fails instantly, even with a busy timeout).
BEGIN IMMEDIATE
