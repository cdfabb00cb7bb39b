-- snapshot_documents.sql: the documents a snapshot holds, as (doc_ord, doc_id,
-- text_key): every document of its path's segments but those it removed. The one
-- statement of that (the CTE "held"), composed wherever a statement needs a
-- snapshot's documents: its digest (snapshot_digest.sql), its documents in id order
-- (the evaluation), a base's documents (base_diff.sql), documents by id (the targets
-- of eval_targets.sql, the hints of riido_pg.ranking.lists). Referenced once, the CTE
-- is inlined, so a look-up by id stays an index look-up per segment of the path.
-- {removed}: the doc_ords the snapshot removed (riido_pg.storage.fragments).
-- Parameters: %(snapshot_id)s.
held AS (
    SELECT d.doc_ord, d.doc_id, d.text_key
    FROM riido.snapshot_segments AS p
    JOIN riido.documents AS d ON d.segment_id = p.segment_id
    WHERE p.snapshot_id = %(snapshot_id)s
      AND d.doc_ord NOT IN ({removed})
)
