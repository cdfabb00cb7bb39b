-- sharing.sql: how many of a chunk's documents (the same id with the same text) each
-- ready snapshot of the load's text configuration holds in its path: the evidence a
-- load picks its base on (README "Snapshots on a base"). A document the snapshot
-- removed from its path still counts: this is an estimate, the base's difference is
-- computed exactly afterwards (base_diff.sql).
--
-- One look-up per chunk document on riido.documents' text_key index.
-- Parameters: %(ids)s (text[]), %(keys)s (uuid[]), %(text_config)s.
SELECT p.snapshot_id, count(*)
FROM unnest(%(ids)s::text[], %(keys)s::uuid[]) AS c(doc_id, key)
JOIN riido.documents AS d ON d.text_key = c.key AND d.doc_id = c.doc_id
JOIN riido.snapshot_segments AS p ON p.segment_id = d.segment_id
JOIN riido.snapshots AS s ON s.snapshot_id = p.snapshot_id
WHERE s.state = 'ready' AND s.text_config = %(text_config)s
GROUP BY p.snapshot_id
