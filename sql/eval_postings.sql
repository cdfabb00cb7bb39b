-- eval_postings.sql: the postings of the given lexemes in one column of a snapshot,
-- in lexeme byte order (the column's collation is "C").
--
-- The evaluation turns them into a sparse term x document matrix of idf * tfn and
-- scores every question against every document with one sparse product per batch
-- of questions, instead of aggregating (question, document) pairs in SQL.
-- Lexeme order matters: a document's score is summed in this order, the order in
-- which rank.sql reads the same postings (primary-key order), so both paths add
-- the same floats in the same order.
-- Parameters: %(snapshot_id)s, %(col)s ('raw' | 'ident'), %(lexemes)s (text[]).
SELECT p.lexeme, p.idf, p.doc_ords, p.tfn
FROM riido.postings AS p
WHERE p.snapshot_id = %(snapshot_id)s
  AND p.col = %(col)s
  AND p.lexeme = ANY(%(lexemes)s::text[])
ORDER BY p.lexeme
