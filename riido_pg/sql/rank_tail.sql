-- rank_tail.sql: the tail every ranking ends with (rank.sql, rank_score.sql),
-- composed by riido_pg.ranking.bm25: the matching
-- documents {matched} (a CTE: doc_ord, the ranking's score {score}, and the column
-- scores a result shows) ordered by score descending, then document id in byte order,
-- then the documents matching nothing with score 0 in id order (sql/zeros.sql, {zeros}).
-- %(limit)s NULL means the full ranking.
--
-- With a limit, only the documents scoring at least the %(limit)s-th best score are
-- kept (every document tied with the last of the first %(limit)s, as FETCH FIRST
-- ... WITH TIES would keep): that score is found by a sort bounded to %(limit)s rows
-- (a top-N heap), where WITH TIES sorts every match in full. Only those documents
-- are looked up by doc_ord to get their ids ({doc_id}), so a top-K reads about K
-- documents rows, not the snapshot.
-- {named_columns}, {zero_columns} and {output} are the column scores of the
-- matches, of the zero-score documents (0, or their column scores from {zero_join}:
-- a document scoring 0 under a weight of 0 may still have one) and of the result.
-- Parameters: %(segments)s, %(limit)s.
-- Returns: (doc_ord, doc_id, score, the column scores).
top AS (
    SELECT m.* FROM {matched} AS m
    WHERE %(limit)s::int8 IS NULL
       OR (m.{score} >= (SELECT k.{score} FROM {matched} AS k ORDER BY k.{score} DESC
                         OFFSET greatest(%(limit)s::int8 - 1, 0) LIMIT 1)) IS NOT FALSE
),
named AS (
    SELECT t.doc_ord, ({doc_id}) AS doc_id, t.{score}{named_columns}
    FROM top AS t
),
{zeros}
SELECT r.doc_ord, r.doc_id, r.{score}{output}
FROM (
    SELECT n.*, 0 AS part FROM named AS n
    UNION ALL
    SELECT z.doc_ord, z.doc_id, 0{zero_columns}, 1
    FROM zeros AS z{zero_join}
) AS r
ORDER BY r.part, r.{score} DESC, r.doc_id
LIMIT %(limit)s
