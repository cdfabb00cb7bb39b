-- count_terms.sql: record the vocabulary size of each column of a snapshot.
-- Parameters: %(snapshot_id)s.
UPDATE riido.column_stats AS c
SET terms = (
    SELECT count(*) FROM riido.postings AS p
    WHERE p.snapshot_id = c.snapshot_id AND p.col = c.col
)
WHERE c.snapshot_id = %(snapshot_id)s
