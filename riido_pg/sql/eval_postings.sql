-- eval_postings.sql: what every term weight of one column of a snapshot for the given
-- lexemes is computed from, per postings row of the snapshot's path holding one of
-- them: its lexeme, the lexeme's idf and the column's avgdl (both the snapshot's), the
-- row's documents with each one's tf and dl, and the removed documents it lists.
--
-- The evaluation computes each weight from them in numpy with the operations of
-- rank.sql's weight, in its order (riido_pg.evaluation.scoring.units: the same float8
-- bits, so the same integer units), leaves out the removed documents as
-- {entries} does, turns them into a sparse term x document matrix and scores every
-- question against every document with one sparse product per batch of questions,
-- instead of aggregating (question, document) pairs in SQL; integer units add up to
-- the same exact score in any order, so both paths rank alike. Only {terms} of
-- scored.sql runs: the CTEs this statement does not read are not computed.
-- Parameters: those of scored.sql (the lexemes are every question's).
-- Returns: (lexeme, idf, avgdl, doc_ords int[], tfs int2[], dls int[], gone int[])
-- in lexeme byte order.
WITH {scored}
SELECT t.lexeme, t.idf, t.avgdl, t.doc_ords, t.tfs, t.dls, t.gone
FROM {terms_name} AS t
ORDER BY t.lexeme
