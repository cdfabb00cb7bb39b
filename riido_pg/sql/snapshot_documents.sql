-- snapshot_documents.sql: the documents a snapshot holds, as (doc_ord, doc_id,
-- text_key): every document of its path's segments but those it removed. A fragment
-- (the CTE "held"), composed where a statement needs the whole snapshot.
-- Parameters: %(snapshot_id)s.
held AS (
    SELECT d.doc_ord, d.doc_id, d.text_key
    FROM riido.snapshot_segments AS p
    JOIN riido.documents AS d ON d.segment_id = p.segment_id
    WHERE p.snapshot_id = %(snapshot_id)s
      AND d.doc_ord NOT IN (
          SELECT unnest(s.removed) FROM riido.snapshots AS s
          WHERE s.snapshot_id = %(snapshot_id)s
      )
)
