-- finalize_column.sql: the postings of one column of one snapshot.
--
-- Run once per column ({tsv} = tsv_raw | tsv_ident, {len} = len_raw | len_ident of
-- riido.texts, the snapshot's documents' texts) when a snapshot is finalized. The
-- numbered documents come from the load's stage (stage_documents.sql: {stage}, the
-- rows of load %(load)s), not from riido.documents, so a parallel load runs the
-- documents insert and the two columns on three connections at once, and the plan
-- knows the stage's size (it is ANALYZEd; riido.documents has no statistics for a
-- snapshot being loaded). Snapshots are immutable, so these never go stale.
--
-- BM25 (Lucene form, README "Ranking"):
--   idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))
--   tfn(t, d) = tf / (tf + k1 * (1 - b + b * dl / avgdl))
--   score(d, q) = sum over distinct query lexemes t in d of idf(t) * tfn(t, d)
-- tf is the number of positions the tsvector keeps for the lexeme.
-- Parameters: %(snapshot_id)s, %(load)s, %(col)s ('raw' | 'ident'), %(k1)s, %(b)s.
-- N and avgdl are the column's statistics; they are not stored, since idf and tfn
-- below are all a ranking needs.
WITH stats AS MATERIALIZED (
    SELECT count(*) AS n, coalesce(avg(t.{len}), 0)::float8 AS avgdl
    FROM {stage} AS d
    JOIN riido.texts AS t ON t.key = d.text_key
    WHERE d.load = %(load)s
)
INSERT INTO riido.postings (snapshot_id, col, lexeme, df, idf, doc_ords, tfn)
SELECT %(snapshot_id)s,
       %(col)s,
       u.lexeme,
       count(*),
       ln(1 + (s.n - count(*) + 0.5) / (count(*) + 0.5)),
       -- no ORDER BY: the two arrays see the same rows in the same order, which is
       -- all that matters, and the aggregate can hash instead of sorting
       array_agg(d.doc_ord),
       array_agg(
           cardinality(u.positions)::float8
           / (cardinality(u.positions) + %(k1)s * (1 - %(b)s + %(b)s * t.{len} / s.avgdl))
       )
FROM {stage} AS d
JOIN riido.texts AS t ON t.key = d.text_key
CROSS JOIN LATERAL unnest(t.{tsv}) AS u
CROSS JOIN stats AS s
WHERE d.load = %(load)s
GROUP BY u.lexeme, s.n, s.avgdl
