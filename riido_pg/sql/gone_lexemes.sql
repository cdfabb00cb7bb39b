-- gone_lexemes.sql: the lexemes of the base's documents a load drops, each with the
-- doc_ords (ascending) of those holding it: the gone lists segment_postings.sql and
-- segment_fields.sql store in the new segment's rows. {words} is the column's
-- tsvector of document d (t.tsv_raw, t.tsv_ident of its text; for the name field,
-- to_tsvector of riido.name_words(d.doc_id) under the load's text configuration), as
-- the base's segments stored it.
-- Parameters: path (the base's path, uuid[]), gone (the dropped doc_ords, int[]), and
-- text_config for the name field (named without their placeholders here: a
-- placeholder in a comment is still a parameter).
SELECT u.lexeme, array_agg(d.doc_ord ORDER BY d.doc_ord) AS doc_ords
FROM riido.documents AS d
JOIN riido.texts AS t ON t.key = d.text_key
CROSS JOIN LATERAL unnest({words}) AS u
WHERE d.segment_id = ANY(%(path)s::uuid[]) AND d.doc_ord = ANY(%(gone)s::int[])
GROUP BY u.lexeme
