-- rank_fused.sql: the identifier_bm25_fused ranking of one snapshot, or its first
-- %(limit)s: score = bm25 (raw column) + %(w)s * identifier_bm25 (identifier column).
--
-- Each column's score is summed exactly as rank.sql sums it (idf * tfn, in lexeme
-- order, from primary-key lookups of the query's own lexemes), so bm25_score and
-- identifier_bm25_score here are bit-identical to those of their own rankings, and
-- the fused score is the one float8 expression raw + w * ident. Ties: doc_ord.
-- Documents whose fused score is 0 (matched by nothing, or only by the identifier
-- column when w = 0) follow with score 0 in doc_ord order, as in rank.sql.
-- Parameters: %(snapshot_id)s, %(raw)s, %(ident)s (text[] lexemes of each column),
-- %(w)s (float8), %(n)s (documents in the snapshot), %(limit)s (NULL: everything).
WITH raw_scored AS MATERIALIZED (
    SELECT x.doc_ord, sum(x.w) AS score
    FROM (
        SELECT u.doc_ord, p.idf * u.tfn AS w
        FROM unnest(%(raw)s::text[]) AS q(lexeme)
        JOIN riido.postings AS p
          ON p.snapshot_id = %(snapshot_id)s AND p.col = 'raw' AND p.lexeme = q.lexeme
        CROSS JOIN LATERAL unnest(p.doc_ords, p.tfn) AS u(doc_ord, tfn)
        ORDER BY u.doc_ord, p.lexeme
    ) AS x
    GROUP BY x.doc_ord
),
ident_scored AS MATERIALIZED (
    SELECT x.doc_ord, sum(x.w) AS score
    FROM (
        SELECT u.doc_ord, p.idf * u.tfn AS w
        FROM unnest(%(ident)s::text[]) AS q(lexeme)
        JOIN riido.postings AS p
          ON p.snapshot_id = %(snapshot_id)s AND p.col = 'ident' AND p.lexeme = q.lexeme
        CROSS JOIN LATERAL unnest(p.doc_ords, p.tfn) AS u(doc_ord, tfn)
        ORDER BY u.doc_ord, p.lexeme
    ) AS x
    GROUP BY x.doc_ord
),
fused AS MATERIALIZED (
    SELECT f.doc_ord, f.raw, f.ident, f.raw + %(w)s::float8 * f.ident AS score
    FROM (
        SELECT coalesce(r.doc_ord, i.doc_ord) AS doc_ord,
               coalesce(r.score, 0)::float8 AS raw,
               coalesce(i.score, 0)::float8 AS ident
        FROM raw_scored AS r
        FULL JOIN ident_scored AS i ON i.doc_ord = r.doc_ord
    ) AS f
    WHERE f.raw + %(w)s::float8 * f.ident > 0
),
top AS (
    SELECT doc_ord, score, raw, ident FROM fused
    ORDER BY score DESC, doc_ord
    LIMIT %(limit)s
),
zeros AS (
    SELECT g AS doc_ord, 0::float8 AS score
    FROM generate_series(0, %(n)s::int - 1) AS g
    WHERE NOT EXISTS (SELECT 1 FROM fused AS s WHERE s.doc_ord = g)
    ORDER BY g
    LIMIT CASE WHEN %(limit)s::int IS NULL THEN NULL
               ELSE greatest(%(limit)s::int - (SELECT count(*) FROM top), 0) END
),
ranked AS (
    SELECT doc_ord, score, raw, ident, 0 AS part FROM top
    UNION ALL
    -- a zero-score document may still have an identifier score (when w = 0)
    SELECT z.doc_ord, z.score, coalesce(r.score, 0), coalesce(i.score, 0), 1 AS part
    FROM zeros AS z
    LEFT JOIN raw_scored AS r ON r.doc_ord = z.doc_ord
    LEFT JOIN ident_scored AS i ON i.doc_ord = z.doc_ord
),
page AS (
    SELECT doc_ord, score, raw, ident, part FROM ranked LIMIT %(limit)s
)
SELECT r.doc_ord, d.doc_id, r.score, r.raw, r.ident
FROM page AS r
JOIN riido.documents AS d ON d.snapshot_id = %(snapshot_id)s AND d.doc_ord = r.doc_ord
ORDER BY r.part, r.score DESC, r.doc_ord
