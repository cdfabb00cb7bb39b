-- stage_documents.sql: number the documents of a load's new segment.
--
-- {source} holds (doc_id, key): every staged document of a self-contained snapshot
-- (riido_stage, filled by COPY as the input was read, ids checked unique by
-- content_digest.sql), or the documents a snapshot on a base adds (riido_added,
-- base_diff.sql). Each gets its doc_ord: %(first_ord)s plus its rank in id byte order
-- (doc_id is C-collated), the order ties are broken in, under the load's uuid, in
-- {stage}: the session's temporary riido_numbered (a load on one connection), or the
-- unlogged riido.load_stage, where every session of a parallel load reads them.
-- insert_segment.sql, insert_documents.sql and both columns' segment_postings.sql
-- read them; the loader ANALYZEs {stage} first, so their plans know how many rows
-- they join.
-- Parameters: %(load)s (the load's uuid), %(first_ord)s.
INSERT INTO {stage} (load, doc_ord, doc_id, text_key)
SELECT %(load)s::uuid,
       (%(first_ord)s + row_number() OVER (ORDER BY s.doc_id) - 1)::int,
       s.doc_id,
       s.key
FROM {source} AS s
