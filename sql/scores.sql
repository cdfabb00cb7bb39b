-- scores.sql: the BM25 scores of given documents in one column (0 when unmatched).
--
-- Same terms and the same summation order (lexeme) as rank.sql, so a document's
-- score here is bit-identical to its score there.
-- Parameters: %(snapshot_id)s, %(col)s, %(lexemes)s (text[]), %(doc_ords)s (int[]).
WITH terms AS (
    SELECT p.lexeme, p.idf, p.doc_ords, p.tfn
    FROM unnest(%(lexemes)s::text[]) AS q(lexeme)
    JOIN riido.postings AS p
      ON p.snapshot_id = %(snapshot_id)s
     AND p.col = %(col)s
     AND p.lexeme = q.lexeme
),
matched AS (
    SELECT u.doc_ord, t.lexeme, t.idf * u.tfn AS w
    FROM terms AS t
    CROSS JOIN LATERAL unnest(t.doc_ords, t.tfn) AS u(doc_ord, tfn)
    WHERE u.doc_ord = ANY(%(doc_ords)s::int[])
)
SELECT o.doc_ord, coalesce(sum(m.w ORDER BY m.lexeme), 0)::float8 AS score
FROM unnest(%(doc_ords)s::int[]) AS o(doc_ord)
LEFT JOIN matched AS m ON m.doc_ord = o.doc_ord
GROUP BY o.doc_ord
