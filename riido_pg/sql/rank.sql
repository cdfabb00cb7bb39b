-- rank.sql: the BM25 ranking of one column of a snapshot, or its first %(limit)s.
--
-- {scored} is sql/scored.sql for the column (preceded by the snapshot's removed
-- documents when it has any, {removed}); {tail} is sql/rank_tail.sql on its
-- matches, their units the score.
-- Parameters: those of scored.sql and rank_tail.sql.
-- Returns: (doc_ord, doc_id, units), units / 2^40 being the score.
WITH {removed}{scored},
{tail}
