-- eval_targets.sql: every target of an evaluation corpus's questions, as
-- (question_id, doc_ord), in question id then doc_ord order.
--
-- Each target's doc_ord is a lookup of its id among the documents the snapshot
-- holds ({held}: snapshot_documents.sql, inlined), on riido.documents' unique
-- (segment_id, doc_id) index over the snapshot's path, one per target row, so the
-- cost is linear in the number of targets, whatever else is stored beside this
-- snapshot. A target the snapshot does not hold has a NULL doc_ord.
-- {targets}: the (question_id, doc_id) rows, as "t": the stored riido.targets of the
-- snapshot, or the targets given with the statement (a history corpus's).
-- Parameters: %(snapshot_id)s and those of {targets}.
WITH {held}
SELECT t.question_id, t.doc_id,
       (SELECT h.doc_ord FROM held AS h WHERE h.doc_id = t.doc_id) AS doc_ord
FROM {targets}
ORDER BY t.question_id, doc_ord
