-- rank.sql: the BM25 ranking of one column of a snapshot, or its first %(limit)s.
--
-- {scored} is sql/scored.sql for the column (preceded by the snapshot's removed
-- documents when it has any, {removed}). The matching documents are ordered by score
-- descending, then document id in byte order; with a limit only the first
-- %(limit)s scores (and every document tied with the last of them) are looked up
-- by doc_ord to get their ids, so a top-K reads K documents rows, not the snapshot.
-- Documents matching nothing follow with score 0 in id order (sql/zeros.sql).
-- %(limit)s NULL means the full ranking.
-- Parameters: those of scored.sql, %(segments)s, %(limit)s.
-- Returns: (doc_ord, doc_id, units), units / 2^40 being the score.
WITH {removed}{scored},
top AS (
    SELECT s.doc_ord, s.units FROM {scored_name} AS s
    ORDER BY s.units DESC
    FETCH FIRST coalesce(%(limit)s::int8, 9223372036854775807) ROWS WITH TIES
),
named AS (
    SELECT t.doc_ord, ({doc_id}) AS doc_id, t.units
    FROM top AS t
),
{zeros}
SELECT r.doc_ord, r.doc_id, r.units
FROM (
    SELECT doc_ord, doc_id, units, 0 AS part FROM named
    UNION ALL
    SELECT doc_ord, doc_id, 0::int8, 1 FROM zeros
) AS r
ORDER BY r.part, r.units DESC, r.doc_id
LIMIT %(limit)s
