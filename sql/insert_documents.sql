-- insert_documents.sql: move staged documents into riido.documents.
--
-- The loader COPYs (doc_ord, doc_id, body, ident) into the temporary table
-- riido_stage, where ident is the identifier-split body (riido_pg.splitting).
-- Both tsvectors use the snapshot's text search configuration; len_* is the
-- document length dl of README "Ranking": the number of lexeme occurrences, i.e. the
-- number of positions the tsvector keeps.
-- Parameters: %(snapshot_id)s, %(text_config)s.
INSERT INTO riido.documents
    (snapshot_id, doc_ord, doc_id, body, tsv_raw, tsv_ident, len_raw, len_ident)
SELECT %(snapshot_id)s,
       s.doc_ord,
       s.doc_id,
       s.body,
       t.raw,
       t.ident,
       (SELECT coalesce(sum(cardinality(u.positions)), 0) FROM unnest(t.raw) AS u)::int,
       (SELECT coalesce(sum(cardinality(u.positions)), 0) FROM unnest(t.ident) AS u)::int
FROM riido_stage AS s
CROSS JOIN LATERAL (
    SELECT to_tsvector(%(text_config)s::regconfig, s.body) AS raw,
           to_tsvector(%(text_config)s::regconfig, s.ident) AS ident
    OFFSET 0  -- a fence: without it the planner inlines the subquery and computes
              -- each to_tsvector twice (for the column and for its length)
) AS t
