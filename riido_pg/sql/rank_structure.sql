-- rank_structure.sql: the structure_bm25 ranking of a snapshot, or its first
-- %(limit)s (README "Ranking with structure"):
--   score = (bm25 + %(w_ident)s * identifier_bm25 + %(w_name)s * name_bm25) * match * prior
-- where name_bm25 is BM25 with b = 0 over the name field (the identifier-split query's
-- lexemes against each document's name: its path and qualified name), match is
-- %(name_match)s for a document whose qualified name (riido.qualified_words of its id,
-- under the snapshot's text search configuration) has lexemes and every one of them is
-- among the identifier-split query's, else 1 (such a document matches the name field,
-- so only those are looked at, each id read once: {doc_id}; with a limit, only those
-- whose score times %(name_match)s reaches the %(limit)s-th best score without the match
-- (bar): a match only raises scores, so no other one can reach the first
-- %(limit)s), and prior is
-- the least of %(test_prior)s for a test document (kind 'test'), %(example_prior)s for
-- documentation, example or benchmark code (kind 'example'), and 1; the caller passes
-- %(test_prior)s = 1 when the question is about tests, %(example_prior)s = 1 when it is
-- about documentation or examples ({kinds}: each document of the
-- path with its kinds).
--
-- {scored_raw}, {scored_ident} and {scored_name} are sql/scored.sql for each column,
-- so bm25_score and identifier_bm25_score are exactly those of their own rankings;
-- the score is the one float8 expression above ({scale}: 2^40), evaluated in that
-- order (the evaluation computes the same one). {tail} is sql/rank_tail.sql on the
-- documents scoring above 0; the others follow with score 0 in id order, with their
-- column scores.
-- Parameters: those of scored.sql for the three columns, %(w_ident)s, %(w_name)s,
-- %(name_match)s, %(test_prior)s, %(example_prior)s, %(snapshot_id)s, and
-- rank_tail.sql's.
-- Returns: (doc_ord, doc_id, score, raw units, identifier units, name units).
WITH {removed}{scored_raw},
{scored_ident},
{scored_name},
kinds AS MATERIALIZED (
    SELECT x.doc_ord,
           min(CASE x.kind WHEN 'test' THEN %(test_prior)s::float8
                           ELSE %(example_prior)s::float8 END) AS prior
    FROM ({kinds}) AS x
    WHERE x.kind IN ('test', 'example')
    GROUP BY x.doc_ord
),
sums AS (
    SELECT coalesce(r.doc_ord, i.doc_ord) AS doc_ord,
           coalesce(r.units, 0) AS raw,
           coalesce(i.units, 0) AS ident
    FROM scored_raw AS r
    FULL JOIN scored_ident AS i ON i.doc_ord = r.doc_ord
),
summed AS MATERIALIZED (
    SELECT coalesce(s.doc_ord, n.doc_ord) AS doc_ord,
           coalesce(s.raw, 0) AS raw,
           coalesce(s.ident, 0) AS ident,
           coalesce(n.units, 0) AS name,
           coalesce(s.raw, 0)::float8 / {scale}
           + %(w_ident)s::float8 * (coalesce(s.ident, 0)::float8 / {scale})
           + %(w_name)s::float8 * (coalesce(n.units, 0)::float8 / {scale}) AS fields,
           coalesce(t.prior, 1::float8) AS prior
    FROM sums AS s
    FULL JOIN scored_name AS n ON n.doc_ord = s.doc_ord
    LEFT JOIN kinds AS t ON t.doc_ord = coalesce(s.doc_ord, n.doc_ord)
),
bar AS (
    SELECT x.fields * x.prior AS score FROM summed AS x
    ORDER BY 1 DESC OFFSET greatest(%(limit)s::int8 - 1, 0) LIMIT 1
),
qualified AS MATERIALIZED (
    SELECT t.doc_ord
    FROM summed AS t
    CROSS JOIN LATERAL (
        SELECT to_tsvector((SELECT c.text_config FROM riido.snapshots AS c
                            WHERE c.snapshot_id = %(snapshot_id)s)::regconfig,
                           riido.qualified_words(({doc_id}))) AS tsv
        OFFSET 0  -- a fence: one id and one to_tsvector per document
    ) AS v
    WHERE t.name > 0
      AND (%(limit)s::int8 IS NULL
           OR (t.fields * %(name_match)s::float8 * t.prior >= (SELECT b.score FROM bar AS b))
              IS NOT FALSE)
      AND v.tsv <> ''::tsvector AND tsvector_to_array(v.tsv) <@ %(lexemes_name)s::text[]
),
fused AS MATERIALIZED (
    SELECT x.doc_ord, x.raw, x.ident, x.name,
           x.fields
           * CASE WHEN q.doc_ord IS NULL THEN 1::float8 ELSE %(name_match)s::float8 END
           * x.prior AS score
    FROM summed AS x
    LEFT JOIN qualified AS q ON q.doc_ord = x.doc_ord
),
matched AS (
    SELECT f.doc_ord, f.score, f.raw, f.ident, f.name FROM fused AS f WHERE f.score > 0
),
{tail}
