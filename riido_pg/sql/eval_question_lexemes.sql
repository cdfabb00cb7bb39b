-- eval_question_lexemes.sql: the distinct lexemes of many questions, for each column,
-- in one statement (the batch form of query_lexemes.sql, same tokenization).
--
-- %(ident)s[i] is the identifier-split form of %(raw)s[i] (riido_pg.splitting).
-- Rows come back in input order.
-- Parameters: %(text_config)s, %(raw)s (text[]), %(ident)s (text[]).
SELECT tsvector_to_array(to_tsvector(%(text_config)s::regconfig, q.raw)) AS raw,
       tsvector_to_array(to_tsvector(%(text_config)s::regconfig, q.ident)) AS ident
FROM unnest(%(raw)s::text[], %(ident)s::text[]) WITH ORDINALITY AS q(raw, ident, n)
ORDER BY q.n
