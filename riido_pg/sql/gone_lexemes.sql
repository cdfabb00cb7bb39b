-- gone_lexemes.sql: the lexemes of the base's documents a load drops, each with the
-- doc_ords (ascending) of those holding it: the gone lists segment_postings.sql and
-- segment_fields.sql store in the new segment's rows. {words} is the column's
-- tsvector of document d (t.tsv_raw, t.tsv_ident of its text; for the name field,
-- to_tsvector of riido.name_words(d.doc_id) under the load's text configuration), as
-- the base's segments stored it.
-- Parameters: path (the base's path, uuid[]), gone (the dropped doc_ords, int[]), and
-- text_config for the name field (named without their placeholders here: a
-- placeholder in a comment is still a parameter).
--
-- Each dropped doc_ord is found in the segment of the path whose ords hold it (a
-- segment's documents are numbered first_ord .. first_ord + documents - 1,
-- stage_documents.sql), one primary-key look-up each: filtering the path's
-- documents by the two lists read every stored document instead (a sequential scan,
-- 22-30 ms at 100,000 stored, for each of a load's three gone lists).
SELECT u.lexeme, array_agg(d.doc_ord ORDER BY d.doc_ord) AS doc_ords
FROM riido.segments AS g
JOIN unnest(%(gone)s::int[]) AS o(doc_ord)
  ON o.doc_ord >= g.first_ord AND o.doc_ord < g.first_ord + g.documents
CROSS JOIN LATERAL (
    SELECT d.doc_ord, d.doc_id, d.text_key FROM riido.documents AS d
    WHERE d.segment_id = g.segment_id AND d.doc_ord = o.doc_ord
    OFFSET 0  -- a fence: as a plain join the planner hashes every stored document
) AS d
JOIN riido.texts AS t ON t.key = d.text_key
CROSS JOIN LATERAL unnest({words}) AS u
WHERE g.segment_id = ANY(%(path)s::uuid[])
GROUP BY u.lexeme
