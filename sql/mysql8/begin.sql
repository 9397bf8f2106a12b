-- Opens a transaction.
START TRANSACTION
