-- dblock schema 0019: on SQLite this step clusters the wait line by (name, ticket), numbers
-- tickets from a counter row and lets a release hand a contended lease lock on in one
-- statement (migrations/sqlite/0019_lock_line_clustered.sql). This dialect needs no change;
-- the step exists so that every dialect keeps the same numbered schema steps.
DO 0;
