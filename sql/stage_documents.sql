-- stage_documents.sql: number a load's documents for the statements that write them.
--
-- The loader COPYs (doc_id, key) into the temporary table riido_stage as it reads
-- its input, in any order (ids checked unique by content_digest.sql). Here each
-- document gets its doc_ord, its rank in id byte order (the stage's doc_id is
-- C-collated), which is the order ties are broken in, under the load's uuid, in
-- {stage}: the session's temporary riido_numbered (a load on one connection), or the
-- unlogged riido.load_stage, where every session of a parallel load reads them.
-- insert_documents.sql and both columns' finalize_column.sql read them; the loader
-- ANALYZEs {stage} first, so their plans know how many rows they join.
-- Parameters: %(load)s (the load's uuid).
INSERT INTO {stage} (load, doc_ord, doc_id, text_key)
SELECT %(load)s::uuid,
       (row_number() OVER (ORDER BY s.doc_id) - 1)::int,
       s.doc_id,
       s.key
FROM riido_stage AS s
