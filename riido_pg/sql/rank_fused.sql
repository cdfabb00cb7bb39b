-- rank_fused.sql: the identifier_bm25_fused ranking of a snapshot, or its first
-- %(limit)s: score = bm25 (raw column) + %(w)s * identifier_bm25 (identifier column).
--
-- {scored_raw} and {scored_ident} are sql/scored.sql for each column, so
-- bm25_score and identifier_bm25_score are exactly those of their own rankings, and
-- the fused score is the one float8 expression raw + w * ident ({scale}: 2^40).
-- {tail} is sql/rank_tail.sql on the documents whose fused score is above 0; the
-- others (matched by nothing, or only by the identifier column when w = 0) follow
-- with score 0 in id order, with their column scores.
-- Parameters: those of scored.sql for both columns, %(w)s, and rank_tail.sql's.
-- Returns: (doc_ord, doc_id, fused score, raw units, identifier units).
WITH {removed}{scored_raw},
{scored_ident},
fused AS MATERIALIZED (
    SELECT coalesce(r.doc_ord, i.doc_ord) AS doc_ord,
           coalesce(r.units, 0) AS raw,
           coalesce(i.units, 0) AS ident,
           coalesce(r.units, 0)::float8 / {scale}
           + %(w)s::float8 * (coalesce(i.units, 0)::float8 / {scale}) AS score
    FROM scored_raw AS r
    FULL JOIN scored_ident AS i ON i.doc_ord = r.doc_ord
),
matched AS (
    SELECT f.doc_ord, f.score, f.raw, f.ident FROM fused AS f WHERE f.score > 0
),
{tail}
