-- Commits with a statement: Connector/C++ 1.1.12 Connection::commit() reports
-- success on a dead connection, a COMMIT statement throws (2013) as it should.
COMMIT
