-- rank_rrf.sql: the identifier_bm25_rrf ranking of a snapshot, or its first
-- %(limit)s: reciprocal rank fusion of the bm25 and identifier_bm25 rankings,
-- score = 1 / (k + rank in bm25) + 1 / (k + rank in identifier_bm25), each term only
-- for a list the document is matched in (a document neither column matches scores 0).
--
-- {scored_raw} and {scored_ident} are sql/scored.sql for each column; {ranked_raw}
-- and {ranked_ident} number each column's matches in their ranking's order (score
-- descending, id ascending), as rank.sql orders them, so the ranks are exactly those
-- of the two rankings. Every match needs its rank (the fusion cannot stop early at a
-- top K), but a match's id only when another match of its column has its score
-- (riido_pg.ranking.bm25._ranked), and none in a path of one segment, whose ords are
-- in id byte order.
-- {tail} is sql/rank_tail.sql on the fused matches; documents matching neither column
-- follow with score 0.
-- Parameters: those of scored.sql for both columns, %(k)s, and rank_tail.sql's.
-- Returns: (doc_ord, doc_id, rrf score, raw units, identifier units).
WITH {removed}{scored_raw},
{scored_ident},
{ranked_raw},
{ranked_ident},
matched AS MATERIALIZED (
    SELECT coalesce(a.doc_ord, b.doc_ord) AS doc_ord,
           coalesce(1::float8 / (%(k)s::float8 + a.r), 0::float8)
           + coalesce(1::float8 / (%(k)s::float8 + b.r), 0::float8) AS score,
           coalesce(a.units, 0) AS raw,
           coalesce(b.units, 0) AS ident
    FROM ranked_raw AS a
    FULL JOIN ranked_ident AS b ON b.doc_ord = a.doc_ord
),
{tail}
