-- scores.sql: one body column's BM25 units of given documents of a snapshot (0 when
-- unmatched), exactly as rank.sql scores them, without a pass over the postings'
-- entries: each asked document's tf and dl are read from its own text's tsvector and
-- length (riido.texts, the values segment_postings.sql copied into the postings), and
-- each query lexeme's df from its postings rows' lengths (less their gone lengths,
-- when the snapshot removed documents). An interleaved ranking asks this for the few
-- candidates one list found and the other did not score.
-- Placeholders: those of scored.sql ({lexemes}, {length}, {col}, {kept}, {b}, {sum},
-- {weight}: the one weight expression), {tsv} and {len} (the column's tsvector and
-- length in riido.texts).
-- Parameters: those of scored.sql, %(doc_ords)s (int[]).
-- Returns: (doc_ord, units).
WITH terms AS MATERIALIZED (
    SELECT y.lexeme,
           ln(1 + (%(n)s::float8 - y.df + 0.5) / (y.df + 0.5)) AS idf,
           {length}::float8 / %(n)s::float8 AS avgdl
    FROM (
        SELECT p.lexeme, (sum({kept}))::float8 AS df
        FROM unnest({lexemes}::text[]) AS q(lexeme)
        JOIN riido.postings AS p
          ON p.segment_id = ANY(%(segments)s::uuid[])
         AND p.col = {col}
         AND p.lexeme = q.lexeme
        GROUP BY p.lexeme
    ) AS y
),
entries AS (
    SELECT u.doc_ord, {weight} AS units
    FROM (
        SELECT o.doc_ord, w.idf, w.avgdl, cardinality(x.positions) AS tf, t.{len} AS dl
        FROM unnest(%(doc_ords)s::int[]) AS o(doc_ord)
        JOIN riido.documents AS d
          ON d.segment_id = ANY(%(segments)s::uuid[]) AND d.doc_ord = o.doc_ord
        JOIN riido.texts AS t ON t.key = d.text_key
        CROSS JOIN LATERAL unnest(t.{tsv}) AS x
        JOIN terms AS w ON w.lexeme = x.lexeme
    ) AS u
)
SELECT o.doc_ord, coalesce(s.units, 0)::int8
FROM unnest(%(doc_ords)s::int[]) AS o(doc_ord)
LEFT JOIN (SELECT e.doc_ord, {sum} AS units FROM entries AS e GROUP BY e.doc_ord) AS s
  ON s.doc_ord = o.doc_ord
