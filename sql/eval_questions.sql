-- eval_questions.sql: the stored questions of an evaluation corpus, in question id
-- byte order, each with its repo and the doc_ords of its targets (ascending; empty
-- for a question without targets, which the evaluation skips and counts).
-- Parameters: %(snapshot_id)s.
SELECT q.question_id,
       q.text,
       q.repo,
       coalesce(
           array_agg(d.doc_ord ORDER BY d.doc_ord) FILTER (WHERE d.doc_ord IS NOT NULL),
           '{}'::int[]
       ) AS target_ords
FROM riido.questions AS q
LEFT JOIN riido.targets AS t
       ON t.snapshot_id = q.snapshot_id AND t.question_id = q.question_id
LEFT JOIN riido.documents AS d
       ON d.snapshot_id = t.snapshot_id AND d.doc_id = t.doc_id
WHERE q.snapshot_id = %(snapshot_id)s
GROUP BY q.question_id, q.text, q.repo
ORDER BY q.question_id
