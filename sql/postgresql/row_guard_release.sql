-- Row guard: forgets the savepoint taken before a NOWAIT or bounded lock attempt
-- (locks taken since stay held by the transaction).
RELEASE SAVEPOINT dblock_row_guard
