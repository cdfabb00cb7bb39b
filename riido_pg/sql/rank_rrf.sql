-- rank_rrf.sql: the identifier_bm25_rrf ranking of a snapshot, or its first
-- %(limit)s: reciprocal rank fusion of the bm25 and identifier_bm25 rankings,
-- score = 1 / (k + rank in bm25) + 1 / (k + rank in identifier_bm25), each term only
-- for a list the document is matched in (a document neither column matches scores 0).
--
-- {scored_raw} and {scored_ident} are sql/scored.sql for each column; a document's
-- rank in a list is its place among that column's matching documents (score
-- descending, id ascending), as in rank.sql, so the ranks are exactly those of the
-- two rankings. Every matching document needs its id for those ranks, so this reads
-- the documents rows of every match (the fusion cannot stop early at a top K).
-- Ties: document id. Documents matching neither column follow with score 0.
-- Parameters: those of scored.sql for both columns, %(k)s, %(segments)s, %(limit)s.
-- Returns: (doc_ord, doc_id, rrf score, raw units, identifier units).
WITH {removed}{scored_raw},
{scored_ident},
ranked_raw AS (
    SELECT x.doc_ord, x.units, row_number() OVER (ORDER BY x.units DESC, x.doc_id) AS r
    FROM (SELECT t.doc_ord, t.units, ({doc_id}) AS doc_id FROM {raw_name} AS t) AS x
),
ranked_ident AS (
    SELECT x.doc_ord, x.units, row_number() OVER (ORDER BY x.units DESC, x.doc_id) AS r
    FROM (SELECT t.doc_ord, t.units, ({doc_id}) AS doc_id FROM {ident_name} AS t) AS x
),
matched AS MATERIALIZED (
    SELECT coalesce(a.doc_ord, b.doc_ord) AS doc_ord,
           coalesce(a.units, 0) AS raw,
           coalesce(b.units, 0) AS ident,
           coalesce(1::float8 / (%(k)s::float8 + a.r), 0::float8)
           + coalesce(1::float8 / (%(k)s::float8 + b.r), 0::float8) AS score
    FROM ranked_raw AS a
    FULL JOIN ranked_ident AS b ON b.doc_ord = a.doc_ord
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
    SELECT doc_ord, doc_id, 0::float8, 0::int8, 0::int8, 1 FROM zeros
) AS r
ORDER BY r.part, r.score DESC, r.doc_id
LIMIT %(limit)s
