-- eval_targets.sql: every target of an evaluation corpus's questions, as
-- (question_id, doc_ord), in question id then doc_ord order.
--
-- Each target's doc_ord is a lookup of its id on riido.documents' unique
-- (segment_id, doc_id) index over the snapshot's path (the id's document the
-- snapshot holds: not one it removed), one per target row, so the cost is linear in
-- the number of targets, whatever else is stored beside this snapshot. A target the
-- snapshot does not hold has a NULL doc_ord.
-- {targets}: the (question_id, doc_id) rows, as "t": the stored riido.targets of the
-- snapshot, or the targets given with the statement (a history corpus's).
-- Parameters: %(snapshot_id)s, %(segments)s (the snapshot's path, uuid[]), and those
-- of {targets}.
SELECT t.question_id, t.doc_id,
       (SELECT d.doc_ord
        FROM riido.documents AS d
        WHERE d.segment_id = ANY(%(segments)s::uuid[])
          AND d.doc_id = t.doc_id
          AND d.doc_ord NOT IN (
              SELECT unnest(s.removed) FROM riido.snapshots AS s
              WHERE s.snapshot_id = %(snapshot_id)s
          )) AS doc_ord
FROM {targets}
ORDER BY t.question_id, doc_ord
