-- Row guard, bounded wait: the transaction's current lock_timeout (to restore it
-- afterwards), then SET LOCAL lock_timeout = $1 (text, e.g. '250ms'). Select-list
-- items are evaluated left to right, so the first column is the value before the change.
SELECT current_setting('lock_timeout') AS previous, set_config('lock_timeout', $1, true) AS current
