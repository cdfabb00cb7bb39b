-- rank.sql: the BM25 ranking of one column of one snapshot, or its first %(limit)s.
--
-- Reads only the postings of the query's own lexemes (primary-key range scans),
-- sums idf * tfn per document, orders by score descending then doc_ord (= document
-- id in byte order). Documents matching no lexeme follow with score 0 in doc_ord
-- order. %(limit)s NULL means the full ranking.
-- Parameters: %(snapshot_id)s, %(col)s, %(lexemes)s (text[]), %(n)s (documents
-- in the snapshot), %(limit)s.
WITH scored AS MATERIALIZED (
    SELECT u.doc_ord, sum(p.idf * u.tfn) AS score
    FROM riido.postings AS p
    CROSS JOIN LATERAL unnest(p.doc_ords, p.tfn) AS u(doc_ord, tfn)
    WHERE p.snapshot_id = %(snapshot_id)s
      AND p.col = %(col)s
      AND p.lexeme = ANY(%(lexemes)s::text[])
    GROUP BY u.doc_ord
),
top AS (
    SELECT doc_ord, score FROM scored
    ORDER BY score DESC, doc_ord
    LIMIT %(limit)s
),
zeros AS (
    SELECT g AS doc_ord, 0::float8 AS score
    FROM generate_series(0, %(n)s::int - 1) AS g
    WHERE NOT EXISTS (SELECT 1 FROM scored AS s WHERE s.doc_ord = g)
    ORDER BY g
    LIMIT CASE WHEN %(limit)s::int IS NULL THEN NULL
               ELSE greatest(%(limit)s::int - (SELECT count(*) FROM top), 0) END
),
ranked AS (
    SELECT doc_ord, score, 0 AS part FROM top
    UNION ALL
    SELECT doc_ord, score, 1 AS part FROM zeros
)
SELECT r.doc_ord, d.doc_id, r.score
FROM ranked AS r
JOIN riido.documents AS d ON d.snapshot_id = %(snapshot_id)s AND d.doc_ord = r.doc_ord
ORDER BY r.part, r.score DESC, r.doc_ord
