-- scores.sql: the BM25 scores of given documents in one column (0 when unmatched).
-- Parameters: %(snapshot_id)s, %(col)s, %(lexemes)s (text[]), %(doc_ords)s (int[]).
SELECT o.doc_ord, coalesce(sum(p.idf * u.tfn), 0)::float8 AS score
FROM unnest(%(doc_ords)s::int[]) AS o(doc_ord)
LEFT JOIN (
    riido.postings AS p
    CROSS JOIN LATERAL unnest(p.doc_ords, p.tfn) AS u(doc_ord, tfn)
) ON p.snapshot_id = %(snapshot_id)s
    AND p.col = %(col)s
    AND p.lexeme = ANY(%(lexemes)s::text[])
    AND u.doc_ord = o.doc_ord
GROUP BY o.doc_ord
