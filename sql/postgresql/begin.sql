-- Opens a transaction (SOCI backend; libpqxx uses pqxx::work).
BEGIN
