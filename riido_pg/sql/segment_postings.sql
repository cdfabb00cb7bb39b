-- segment_postings.sql: the postings of one column of a new segment.
--
-- Run once per column ({tsv} = tsv_raw | tsv_ident of riido.texts) when a segment is
-- written. The numbered documents come from the load's stage (stage_documents.sql:
-- {stage}, the rows of load %(load)s), not from riido.documents, so a parallel load
-- runs the documents insert and the two columns on three connections at once, and
-- the plan knows the stage's size (it is ANALYZEd).
--
-- Each lexeme's row lists the new documents holding it (doc_ords), and for each its term
-- frequency tf (tfs: the positions the tsvector keeps for the lexeme) and its length
-- dl (dls: the text's len_* of insert_texts.sql). Nothing here depends on another
-- document or snapshot: idf and the length saturation are computed when a snapshot
-- is ranked (sql/scored.sql), so a segment serves every snapshot whose path holds it
-- and never goes stale.
-- A snapshot stored on a base that drops some of the base's documents (README
-- "Snapshots on a base") also lists them here, in each lexeme's row of its new
-- segment: gone, the doc_ords (ascending) of the dropped documents holding the lexeme
-- ({gone}: those documents' lexemes, from the base's path; a row with no new document
-- holding the lexeme has empty doc_ords, tfs and dls). A snapshot's removed documents
-- are its base's plus those it drops, so the rows of its path list each removed
-- document under each of its lexemes exactly once: a lexeme's df is its rows'
-- lengths less their gone lengths, and a query leaves out only the removed documents
-- holding one of its lexemes (sql/scored.sql). {gone} is empty (no rows) when the
-- load drops nothing.
-- Parameters: %(segment)s, %(load)s, %(col)s ('raw' | 'ident'), and those of
-- gone_lexemes.sql when {gone} is that (not named here: a placeholder in a comment is
-- still a parameter).
INSERT INTO riido.postings (segment_id, col, lexeme, doc_ords, tfs, dls, gone)
SELECT %(segment)s::uuid, %(col)s, coalesce(n.lexeme, g.lexeme),
       coalesce(n.doc_ords, ARRAY[]::int[]), coalesce(n.tfs, ARRAY[]::smallint[]),
       coalesce(n.dls, ARRAY[]::int[]), g.doc_ords
FROM (
    SELECT u.lexeme,
           -- no ORDER BY: the three arrays see the same rows in the same order, which
           -- is all that matters, and the aggregate can hash instead of sorting
           array_agg(s.doc_ord) AS doc_ords,
           array_agg(cardinality(u.positions)::smallint) AS tfs,
           array_agg(t.{len}) AS dls
    FROM {stage} AS s
    JOIN riido.texts AS t ON t.key = s.text_key
    CROSS JOIN LATERAL unnest(t.{tsv}) AS u
    WHERE s.load = %(load)s
    GROUP BY u.lexeme
) AS n
FULL JOIN ({gone}) AS g ON g.lexeme = n.lexeme
