-- base_diff.sql: the difference between a load's staged documents (riido_stage:
-- doc_id, key) and the documents of its base snapshot %(snapshot_id)s.
--
-- A document is the same when its id holds the same text (key). The base's
-- documents the load does not hold are removed from the new snapshot's path (their
-- ords returned, with their summed lengths, so the new snapshot's N and avgdl follow
-- without reading the documents it keeps); the staged documents the base does not
-- hold are written into riido_added, to become the new snapshot's own segment.
-- Both sides are hash-joined once, in one full join whose unmatched rows are the
-- difference (two anti-joins hashed each side in turn, and kept the base's
-- documents materialized for the second): the cost grows with the snapshot, not
-- with the other snapshots stored. {held} is snapshot_documents.sql: the base's
-- documents. Every column compared is NOT NULL on both sides, so a NULL marks the
-- side without a match.
-- Parameters: %(snapshot_id)s (the base).
-- Returns: (added, gone, gone doc_ords int[] ascending, gone len_raw, gone len_ident).
WITH {held},
diff AS MATERIALIZED (
    SELECT b.doc_ord, b.text_key, s.doc_id AS added_id, s.key AS added_key
    FROM held AS b
    FULL JOIN riido_stage AS s ON s.doc_id = b.doc_id AND s.key = b.text_key
    WHERE b.doc_id IS NULL OR s.doc_id IS NULL
),
gone AS MATERIALIZED (
    SELECT d.doc_ord, d.text_key FROM diff AS d WHERE d.added_id IS NULL
),
added AS (
    INSERT INTO riido_added (doc_id, key)
    SELECT d.added_id, d.added_key FROM diff AS d WHERE d.doc_ord IS NULL
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
