-- eval_targets.sql: every target of an evaluation corpus's questions, as
-- (question_id, doc_ord), in question id then doc_ord order.
--
-- Each target's doc_ord is a lookup on the unique (snapshot_id, doc_id) index
-- of riido.documents, one per target row, so the cost is linear in the number of
-- targets before and after ANALYZE and with other large snapshots stored beside
-- this one (a join here let stale or fresh statistics choose nested loops that
-- filter every target against every question).
-- Parameters: %(snapshot_id)s.
SELECT t.question_id,
       (SELECT d.doc_ord
        FROM riido.documents AS d
        WHERE d.snapshot_id = t.snapshot_id AND d.doc_id = t.doc_id) AS doc_ord
FROM riido.targets AS t
WHERE t.snapshot_id = %(snapshot_id)s
ORDER BY t.question_id, doc_ord
