-- rank_structure.sql: the structure_bm25 ranking of a snapshot, or its first
-- %(limit)s (README "Ranking with structure"):
--   score = (bm25 + %(w_ident)s * identifier_bm25 + %(w_name)s * name_bm25) * prior
-- where name_bm25 is BM25 with b = 0 over the name field (the identifier-split query's
-- lexemes against each document's name: its path and qualified name), and prior is
-- the least of %(test_prior)s for a test document (kind 'test'), %(example_prior)s for
-- documentation, example or benchmark code (kind 'example'), and 1; the caller passes
-- %(test_prior)s = 1 when the question is about tests, %(example_prior)s = 1 when it is
-- about documentation or examples.
--
-- {scored_raw}, {scored_ident} and {scored_name} are sql/scored.sql for each column,
-- so bm25_score and identifier_bm25_score are exactly those of their own rankings;
-- the score is the one float8 expression above, evaluated in that order (the
-- evaluation computes the same one). Ties: document id. Documents whose score is 0
-- follow with score 0 in id order, as in rank.sql.
-- Parameters: those of scored.sql for the three columns, %(w_ident)s, %(w_name)s,
-- %(test_prior)s, %(example_prior)s, %(segments)s, %(limit)s.
-- Returns: (doc_ord, doc_id, score, raw units, identifier units, name units).
WITH {removed}{scored_raw},
{scored_ident},
{scored_name},
kinds AS MATERIALIZED (
    SELECT u.doc_ord,
           min(CASE p.lexeme WHEN 'test' THEN %(test_prior)s::float8
                             ELSE %(example_prior)s::float8 END) AS prior
    FROM riido.postings AS p
    CROSS JOIN LATERAL unnest(p.doc_ords) AS u(doc_ord)
    WHERE p.segment_id = ANY(%(segments)s::uuid[]) AND p.col = 'kind'
      AND p.lexeme IN ('test', 'example')
    GROUP BY u.doc_ord
),
sums AS (
    SELECT coalesce(r.doc_ord, i.doc_ord) AS doc_ord,
           coalesce(r.units, 0) AS raw,
           coalesce(i.units, 0) AS ident
    FROM scored_raw AS r
    FULL JOIN scored_ident AS i ON i.doc_ord = r.doc_ord
),
fused AS MATERIALIZED (
    SELECT coalesce(s.doc_ord, n.doc_ord) AS doc_ord,
           coalesce(s.raw, 0) AS raw,
           coalesce(s.ident, 0) AS ident,
           coalesce(n.units, 0) AS name,
           (coalesce(s.raw, 0)::float8 / 1099511627776::float8
            + %(w_ident)s::float8 * (coalesce(s.ident, 0)::float8 / 1099511627776::float8)
            + %(w_name)s::float8 * (coalesce(n.units, 0)::float8 / 1099511627776::float8))
           * coalesce(t.prior, 1::float8) AS score
    FROM sums AS s
    FULL JOIN scored_name AS n ON n.doc_ord = s.doc_ord
    LEFT JOIN kinds AS t ON t.doc_ord = coalesce(s.doc_ord, n.doc_ord)
),
matched AS (
    SELECT * FROM fused WHERE score > 0
),
top AS (
    SELECT m.doc_ord, m.score, m.raw, m.ident, m.name FROM matched AS m
    ORDER BY m.score DESC
    FETCH FIRST coalesce(%(limit)s::int8, 9223372036854775807) ROWS WITH TIES
),
named AS (
    SELECT t.doc_ord, ({doc_id}) AS doc_id, t.score, t.raw, t.ident, t.name
    FROM top AS t
),
{zeros}
SELECT r.doc_ord, r.doc_id, r.score, r.raw, r.ident, r.name
FROM (
    SELECT doc_ord, doc_id, score, raw, ident, name, 0 AS part FROM named
    UNION ALL
    -- a zero-score document may still have column scores (a zero weight or prior)
    SELECT z.doc_ord, z.doc_id, 0::float8, coalesce(f.raw, 0), coalesce(f.ident, 0),
           coalesce(f.name, 0), 1
    FROM zeros AS z
    LEFT JOIN fused AS f ON f.doc_ord = z.doc_ord
) AS r
ORDER BY r.part, r.score DESC, r.doc_id
LIMIT %(limit)s
