-- scored.sql: one column's BM25 scores of the documents of a snapshot that match the
-- query, as {scored} (doc_ord, units), and each term's weight as {entries} (lexeme,
-- doc_ord, units): the fragment every ranking and the evaluation compose
-- (riido_pg.ranking.bm25). Placeholders filled there: {terms}, {entries}, {scored}
-- (CTE names), {lexemes}, {length} (parameters of this column: the query's distinct
-- lexemes, the snapshot's summed document length), {col} ('raw' | 'ident' | 'name'),
-- {b} (the length normalisation: %(b)s for the body's columns, 0 for the name
-- field, whose length is then never read), {weight} (the weight below, in units,
-- of the row u: riido_pg.ranking.bm25.WEIGHT), {kept} (what a postings row adds to
-- its lexeme's df: its length, less its gone length when the snapshot removed
-- documents from its path), {gone} (when it removed any: the CTE of the removed
-- documents holding one of the query's lexemes, the rows' gone doc_ords),
-- {keep} (a WHERE clause on u.doc_ord: those documents left out; empty when it
-- removed none, and when {keep_scored}, a HAVING clause, leaves them out of {scored}
-- instead: once per document, not once per entry, which the rankings take and
-- eval_postings.sql, reading the entries, cannot) and {sum} (the sum of a document's
-- units: see below).
-- Parameters: %(segments)s (the snapshot's path, uuid[]), %(n)s (its documents),
-- %(k1)s, %(b)s.
--
-- BM25, Lucene form (README "Ranking"), everything per snapshot and column:
--   idf(t)   = ln(1 + (N - df + 0.5) / (df + 0.5))
--   w(t, d)  = idf(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl)),  avgdl = len / N
--   score(d) = sum over the distinct query lexemes t in d of w(t, d)
-- tf and dl are stored in the postings (the positions PostgreSQL keeps); N, len and
-- df are the snapshot's, so a segment's postings serve every snapshot holding it.
-- A snapshot on a base holds its path's documents less those it removed; the rows
-- of its path list each removed document under each of its lexemes once, in their
-- gone arrays (sql/segment_postings.sql), so df is the lexeme's rows' lengths less
-- their gone lengths, and only the removed documents holding a query lexeme are left
-- out of the scores, whatever the size of the removed set.
-- Each w is counted in units of 2^-40 (rounded to the nearest) and the units are
-- summed as integers: a document's score is the same exact number whatever order a
-- plan adds its terms in, on every path (rank, fused, scores, the evaluation).
--
-- Where the time goes (docs/how-it-works.md "Where a query's time goes"): the arrays
-- are unnested in a select list (a ProjectSet node, which streams), not in FROM (a
-- function scan, which first copies every entry into a tuplestore that spills to
-- disk past work_mem); and {sum} adds the units as float8 when the query is short
-- enough that every sum stays below 2^53 (integers below 2^53 add exactly in float8,
-- in any order, and float8's sum keeps its state by value where int8's allocates a
-- numeric state per document), as int8 otherwise (riido_pg.ranking.bm25._sum).
{terms} AS MATERIALIZED (
    SELECT y.lexeme, y.doc_ords, y.tfs, y.dls, y.gone,
           ln(1 + (%(n)s::float8 - y.df + 0.5) / (y.df + 0.5)) AS idf,
           {length}::float8 / %(n)s::float8 AS avgdl
    FROM (
        SELECT p.lexeme, p.doc_ords, p.tfs, p.dls, p.gone,
               (sum({kept}) OVER (PARTITION BY p.lexeme))::float8 AS df
        FROM unnest({lexemes}::text[]) AS q(lexeme)
        JOIN riido.postings AS p
          ON p.segment_id = ANY(%(segments)s::uuid[])
         AND p.col = {col}
         AND p.lexeme = q.lexeme
    ) AS y
),
{gone}{entries} AS (
    SELECT u.lexeme, u.doc_ord, {weight} AS units
    FROM (
        SELECT t.lexeme, t.idf, t.avgdl,
               unnest(t.doc_ords) AS doc_ord, unnest(t.tfs) AS tf, unnest(t.dls) AS dl
        FROM {terms} AS t
    ) AS u
    {keep}
),
{scored} AS MATERIALIZED (
    SELECT e.doc_ord, {sum} AS units FROM {entries} AS e GROUP BY e.doc_ord
    {keep_scored}
)
