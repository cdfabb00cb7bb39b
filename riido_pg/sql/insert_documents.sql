-- insert_documents.sql: a new segment's documents, from its load's numbered stage.
--
-- stage_documents.sql has numbered the load's documents into {stage} (the session's
-- temporary riido_numbered, or, in a parallel load, riido.load_stage, committed, so
-- the sessions building the postings read the same rows at the same time); every
-- key is stored in riido.texts by then (insert_texts.sql, or an earlier snapshot).
-- Parameters: %(segment)s, %(load)s (the load's uuid).
INSERT INTO riido.documents (segment_id, doc_ord, doc_id, text_key)
SELECT %(segment)s::uuid, s.doc_ord, s.doc_id, s.text_key
FROM {stage} AS s
WHERE s.load = %(load)s
