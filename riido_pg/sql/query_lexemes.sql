-- query_lexemes.sql: the distinct lexemes of a query, for each column.
--
-- The query goes through the same text search configuration as the documents:
-- the raw text for tsv_raw, its identifier-split form for tsv_ident.
-- Parameters: %(text_config)s, %(raw)s, %(ident)s.
SELECT tsvector_to_array(to_tsvector(%(text_config)s::regconfig, %(raw)s)) AS raw,
       tsvector_to_array(to_tsvector(%(text_config)s::regconfig, %(ident)s)) AS ident
