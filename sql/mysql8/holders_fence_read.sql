-- After holders_fence.sql: the value it drew (this connection's own LAST_INSERT_ID()).
SELECT LAST_INSERT_ID()
