-- dblock schema 0015: on PostgreSQL this step makes a hand-off's release notice name the head
-- of the line, its ticket and its fence (migrations/postgresql/0015_lock_hand_off_notice.sql).
-- MariaDB has no release notices; the step exists so that every dialect keeps the same numbered
-- schema steps. DO evaluates an expression and changes nothing.
DO 0;
