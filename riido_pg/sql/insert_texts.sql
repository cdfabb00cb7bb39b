-- insert_texts.sql: store the texts of a load that no snapshot holds yet.
--
-- The loader COPYs (key, doc_id, body, ident) into the temporary table
-- riido_texts_in: key is riido_pg.storage.texts.text_key of the body, doc_id one
-- document holding it (for messages), ident the identifier-split body
-- (riido_pg.splitting); a key may come twice (one connection stages a whole load). Both tsvectors use the load's text search configuration;
-- len_* is the document length dl of README "Ranking": the number of lexeme
-- occurrences, i.e. the number of positions the tsvector keeps. A text another load
-- stored meanwhile is kept as it is (same key, same text, same tsvectors). The keys
-- this statement stored are recorded as pending under the load's token, so a load
-- that never finishes leaves nothing the collector cannot find; the load removes its
-- token's rows when it commits (a NULL token records nothing: a load in one
-- transaction cannot leave anything behind).
-- Parameters: %(text_config)s, %(token)s (uuid or NULL).
WITH stored AS (
    INSERT INTO riido.texts (key, body, tsv_raw, tsv_ident, len_raw, len_ident)
    SELECT i.key,
           i.body,
           t.raw,
           t.ident,
           (SELECT coalesce(sum(cardinality(u.positions)), 0) FROM unnest(t.raw) AS u)::int,
           (SELECT coalesce(sum(cardinality(u.positions)), 0) FROM unnest(t.ident) AS u)::int
    FROM (SELECT DISTINCT ON (key) * FROM riido_texts_in ORDER BY key) AS i
    CROSS JOIN LATERAL (
        SELECT to_tsvector(%(text_config)s::regconfig, i.body) AS raw,
               to_tsvector(%(text_config)s::regconfig, i.ident) AS ident
        OFFSET 0  -- a fence: without it the planner inlines the subquery and computes
                  -- each to_tsvector twice (for the column and for its length)
    ) AS t
    -- key order: two loads storing the same new texts wait for each other in one
    -- order, so they never deadlock
    ORDER BY i.key
    ON CONFLICT (key) DO NOTHING
    RETURNING key
)
INSERT INTO riido.text_pending (token, key)
SELECT %(token)s::uuid, s.key FROM stored AS s WHERE %(token)s::uuid IS NOT NULL
