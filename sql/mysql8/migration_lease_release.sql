-- Release the migration lease if owner $1 still holds it.
DELETE FROM dblock_migration_lease WHERE id = 1 AND owner = $1
