-- eval_questions.sql: the stored questions of an evaluation corpus, in question id
-- byte order, each with its repo. Their targets come from eval_targets.sql.
--
-- One table, filtered by its primary key's first column: the plan is a scan of
-- this corpus's questions whatever the statistics say.
-- Parameters: %(snapshot_id)s.
SELECT q.question_id, q.text, q.repo
FROM riido.questions AS q
WHERE q.snapshot_id = %(snapshot_id)s
ORDER BY q.question_id
