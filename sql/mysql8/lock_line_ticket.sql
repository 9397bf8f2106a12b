-- The ticket lock_line_join.sql just took on this connection (its AUTO_INCREMENT value;
-- LAST_INSERT_ID() is per connection).
SELECT LAST_INSERT_ID()
