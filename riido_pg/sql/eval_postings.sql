-- eval_postings.sql: every term weight of one column of a snapshot for the given
-- lexemes, per lexeme: the documents holding it and each one's weight in units of
-- 2^-40, exactly as rank.sql sums them ({entries} of sql/scored.sql).
--
-- The evaluation turns them into a sparse term x document matrix and scores every
-- question against every document with one sparse product per batch of questions,
-- instead of aggregating (question, document) pairs in SQL; integer units add up to
-- the same exact score in any order, so both paths rank alike.
-- Parameters: those of scored.sql (the lexemes are every question's).
-- Returns: (lexeme, doc_ords int[], units int8[]) in lexeme byte order.
WITH {scored}
SELECT e.lexeme, array_agg(e.doc_ord), array_agg(e.units)
FROM {entries_name} AS e
GROUP BY e.lexeme
ORDER BY e.lexeme
