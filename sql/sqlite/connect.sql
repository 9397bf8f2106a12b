-- Run on every connection dblock opens to SQLite.
-- WAL: readers never block the writer; synchronous=FULL: a granted lock survives power loss.
PRAGMA journal_mode = WAL;
PRAGMA synchronous = FULL;
PRAGMA foreign_keys = ON;
