-- collect_segments.sql: remove the segments no snapshot's path holds any more.
--
-- A segment loses its last snapshot when the snapshots whose paths hold it are
-- dropped or replaced; a load that failed or was killed may have written one no
-- snapshot ever held. Their documents and postings go with them (ON
-- DELETE CASCADE) and their texts become candidates for collect_texts.sql (run next).
-- Runs only under the texts lock held exclusively (riido_pg.storage.texts), so no
-- running load is writing, or about to publish, a segment it removes.
WITH gone AS (
    DELETE FROM riido.segments AS g
    WHERE NOT EXISTS (
        SELECT 1 FROM riido.snapshot_segments AS p WHERE p.segment_id = g.segment_id
    )
    RETURNING g.segment_id
)
INSERT INTO riido.text_pending (token, key)
SELECT DISTINCT NULL::uuid, d.text_key
FROM riido.documents AS d
JOIN gone AS x ON x.segment_id = d.segment_id
