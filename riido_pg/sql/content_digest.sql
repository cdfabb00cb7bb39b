-- content_digest.sql: the content digest of a load's staged documents (digest.sql
-- over the temporary table riido_stage, filled as the input is read), their count,
-- and a duplicate id if there is one.
SELECT {digest},
       count(*),
       (SELECT d.doc_id FROM riido_stage AS d GROUP BY d.doc_id HAVING count(*) > 1
        ORDER BY d.doc_id LIMIT 1)
FROM riido_stage AS x
