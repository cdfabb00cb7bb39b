-- segment_postings.sql: the postings of one column of a new segment.
--
-- Run once per column ({tsv} = tsv_raw | tsv_ident of riido.texts) when a segment is
-- written. The numbered documents come from the load's stage (stage_documents.sql:
-- {stage}, the rows of load %(load)s), not from riido.documents, so a parallel load
-- runs the documents insert and the two columns on three connections at once, and
-- the plan knows the stage's size (it is ANALYZEd).
--
-- Each lexeme's row lists the documents holding it (doc_ords), and for each its term
-- frequency tf (tfs: the positions the tsvector keeps for the lexeme) and its length
-- dl (dls: the text's len_* of insert_texts.sql). Nothing here depends on another
-- document or snapshot: idf and the length saturation are computed when a snapshot
-- is ranked (sql/scored.sql), so a segment serves every snapshot whose path holds it
-- and never goes stale.
-- Parameters: %(segment)s, %(load)s, %(col)s ('raw' | 'ident').
INSERT INTO riido.postings (segment_id, col, lexeme, doc_ords, tfs, dls)
SELECT %(segment)s::uuid,
       %(col)s,
       u.lexeme,
       -- no ORDER BY: the three arrays see the same rows in the same order, which is
       -- all that matters, and the aggregate can hash instead of sorting
       array_agg(s.doc_ord),
       array_agg(cardinality(u.positions)::smallint),
       array_agg(t.{len})
FROM {stage} AS s
JOIN riido.texts AS t ON t.key = s.text_key
CROSS JOIN LATERAL unnest(t.{tsv}) AS u
WHERE s.load = %(load)s
GROUP BY u.lexeme
