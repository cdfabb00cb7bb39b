-- rank_fused.sql: the identifier_bm25_fused ranking of a snapshot, or its first
-- %(limit)s: score = bm25 (raw column) + %(w)s * identifier_bm25 (identifier column).
--
-- {scored_raw} and {scored_ident} are sql/scored.sql for each column, so
-- bm25_score and identifier_bm25_score are exactly those of their own rankings, and
-- the fused score is the one float8 expression raw + w * ident. Ties: document id.
-- Documents whose fused score is 0 (matched by nothing, or only by the identifier
-- column when w = 0) follow with score 0 in id order, as in rank.sql.
-- Parameters: those of scored.sql for both columns, %(w)s, %(segments)s, %(limit)s.
-- Returns: (doc_ord, doc_id, fused score, raw units, identifier units).
WITH {removed}{scored_raw},
{scored_ident},
fused AS MATERIALIZED (
    SELECT coalesce(r.doc_ord, i.doc_ord) AS doc_ord,
           coalesce(r.units, 0) AS raw,
           coalesce(i.units, 0) AS ident,
           coalesce(r.units, 0)::float8 / 1099511627776::float8
           + %(w)s::float8 * (coalesce(i.units, 0)::float8 / 1099511627776::float8) AS score
    FROM {raw_name} AS r
    FULL JOIN {ident_name} AS i ON i.doc_ord = r.doc_ord
),
matched AS (
    SELECT * FROM fused WHERE score > 0
),
top AS (
    SELECT m.doc_ord, m.score, m.raw, m.ident FROM matched AS m
    ORDER BY m.score DESC
    FETCH FIRST coalesce(%(limit)s::int8, 9223372036854775807) ROWS WITH TIES
),
named AS (
    SELECT t.doc_ord, ({doc_id}) AS doc_id, t.score, t.raw, t.ident
    FROM top AS t
),
{zeros}
SELECT r.doc_ord, r.doc_id, r.score, r.raw, r.ident
FROM (
    SELECT doc_ord, doc_id, score, raw, ident, 0 AS part FROM named
    UNION ALL
    -- a zero-score document may still have an identifier score (when w = 0)
    SELECT z.doc_ord, z.doc_id, 0::float8, coalesce(f.raw, 0), coalesce(f.ident, 0), 1
    FROM zeros AS z
    LEFT JOIN fused AS f ON f.doc_ord = z.doc_ord
) AS r
ORDER BY r.part, r.score DESC, r.doc_id
LIMIT %(limit)s
