-- rank.sql: the BM25 ranking of one column of one snapshot, or its first %(limit)s.
--
-- Reads only the postings of the query's own lexemes (primary-key lookups),
-- sums idf * tfn per document, orders by score descending then doc_ord (= document
-- id in byte order). Documents matching no lexeme follow with score 0 in doc_ord
-- order. %(limit)s NULL means the full ranking.
-- Parameters: %(snapshot_id)s, %(col)s, %(lexemes)s (text[]), %(n)s (documents
-- in the snapshot), %(limit)s.
WITH terms AS (
    -- one primary-key lookup per query lexeme: a plan that does not depend on
    -- table statistics
    SELECT p.lexeme, p.idf, p.doc_ords, p.tfn
    FROM unnest(%(lexemes)s::text[]) AS q(lexeme)
    JOIN riido.postings AS p
      ON p.snapshot_id = %(snapshot_id)s
     AND p.col = %(col)s
     AND p.lexeme = q.lexeme
),
scored AS MATERIALIZED (
    -- each document's terms are summed in lexeme order whatever the plan, so equal
    -- documents get bit-identical scores and ties fall to doc_ord as they should
    SELECT x.doc_ord, sum(x.w) AS score
    FROM (
        SELECT u.doc_ord, t.idf * u.tfn AS w
        FROM terms AS t
        CROSS JOIN LATERAL unnest(t.doc_ords, t.tfn) AS u(doc_ord, tfn)
        ORDER BY u.doc_ord, t.lexeme
    ) AS x
    GROUP BY x.doc_ord
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
),
-- LIMIT never drops a row here (top and zeros hold at most %(limit)s together); it
-- tells the planner a top-K is small, so ids come from primary-key lookups, while a
-- full ranking (limit NULL) joins the documents with a hash join
page AS (
    SELECT doc_ord, score, part FROM ranked LIMIT %(limit)s
)
SELECT r.doc_ord, d.doc_id, r.score
FROM page AS r
JOIN riido.documents AS d ON d.snapshot_id = %(snapshot_id)s AND d.doc_ord = r.doc_ord
ORDER BY r.part, r.score DESC, r.doc_ord
