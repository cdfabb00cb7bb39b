-- sharing.sql: how many of a chunk's documents (the same id with the same text) each
-- ready snapshot of the load's text configuration holds in its path: the evidence a
-- load picks its base on (README "Snapshots on a base"). A document the snapshot
-- removed from its path still counts: this is an estimate, the base's difference is
-- computed exactly afterwards (base_diff.sql).
--
-- One look-up per chunk document on riido.documents' text_key index, counted per
-- segment first: a segment shared by many snapshots (a history's base) is counted
-- once and its count then added to each of them, so a load's sample costs the same
-- however many snapshots a history already holds. The look-up is a LATERAL
-- subquery behind OFFSET 0: as a plain join the planner misjudges the two-column
-- match as one row and hashes every stored document instead (measured at 100,000
-- stored: 41-55 ms a chunk against 6-11 ms, and growing with every snapshot).
-- Parameters: %(ids)s (text[]), %(keys)s (uuid[]), %(text_config)s.
WITH found AS (
    SELECT d.segment_id, count(*) AS n
    FROM unnest(%(ids)s::text[], %(keys)s::uuid[]) AS c(doc_id, key)
    CROSS JOIN LATERAL (
        SELECT d.segment_id FROM riido.documents AS d
        WHERE d.text_key = c.key AND d.doc_id = c.doc_id
        OFFSET 0
    ) AS d
    GROUP BY d.segment_id
)
SELECT p.snapshot_id, sum(f.n)::int8
FROM found AS f
JOIN riido.snapshot_segments AS p ON p.segment_id = f.segment_id
JOIN riido.snapshots AS s ON s.snapshot_id = p.snapshot_id
WHERE s.state = 'ready' AND s.text_config = %(text_config)s
GROUP BY p.snapshot_id
