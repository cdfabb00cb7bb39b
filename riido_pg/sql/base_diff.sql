-- base_diff.sql: the difference between a load's staged documents (riido_stage:
-- doc_id, key) and the documents of its base snapshot %(snapshot_id)s.
--
-- A document is the same when its id holds the same text (key). The base's
-- documents the load does not hold are removed from the new snapshot's path (their
-- ords returned, with their summed lengths, so the new snapshot's N and avgdl follow
-- without reading the documents it keeps); the staged documents the base does not
-- hold are written into riido_added, to become the new snapshot's own segment.
-- Both sides are hash-joined once: the cost grows with the snapshot, not with the
-- other snapshots stored. {held} is snapshot_documents.sql: the base's documents.
-- Parameters: %(snapshot_id)s (the base).
-- Returns: (added, gone, gone doc_ords int[] ascending, gone len_raw, gone len_ident).
WITH {held},
base AS MATERIALIZED (
    SELECT h.doc_ord, h.doc_id, h.text_key FROM held AS h
),
gone AS MATERIALIZED (
    SELECT b.doc_ord, b.text_key
    FROM base AS b
    WHERE NOT EXISTS (
        SELECT 1 FROM riido_stage AS s WHERE s.doc_id = b.doc_id AND s.key = b.text_key
    )
),
added AS (
    INSERT INTO riido_added (doc_id, key)
    SELECT s.doc_id, s.key
    FROM riido_stage AS s
    WHERE NOT EXISTS (SELECT 1 FROM base AS b WHERE b.doc_id = s.doc_id AND b.text_key = s.key)
    RETURNING 1
),
lengths AS (
    SELECT coalesce(sum(t.len_raw), 0)::int8 AS len_raw,
           coalesce(sum(t.len_ident), 0)::int8 AS len_ident
    FROM gone AS g
    JOIN riido.texts AS t ON t.key = g.text_key
)
SELECT (SELECT count(*) FROM added),
       (SELECT count(*) FROM gone),
       (SELECT coalesce(array_agg(g.doc_ord ORDER BY g.doc_ord), '{{}}'::int[]) FROM gone AS g),
       l.len_raw,
       l.len_ident
FROM lengths AS l
