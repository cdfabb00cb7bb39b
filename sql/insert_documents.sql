-- insert_documents.sql: a snapshot's documents, from the load's staging table.
--
-- The loader COPYs (doc_id, key) into the temporary table riido_stage as it reads
-- its input, in any order; doc_ord numbers the documents in id byte order (the stage's
-- doc_id is C-collated), which is the order ties are broken in. Every key is stored
-- in riido.texts by then (insert_texts.sql, or an earlier snapshot).
-- Parameters: %(snapshot_id)s.
INSERT INTO riido.documents (snapshot_id, doc_ord, doc_id, text_key)
SELECT %(snapshot_id)s,
       (row_number() OVER (ORDER BY s.doc_id) - 1)::int,
       s.doc_id,
       s.key
FROM riido_stage AS s
