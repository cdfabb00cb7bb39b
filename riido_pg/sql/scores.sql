-- scores.sql: one column's BM25 scores of given documents of a snapshot (0 when
-- unmatched), exactly as rank.sql scores them ({scored} is sql/scored.sql with its
-- {keep} clause restricted to %(doc_ords)s: the query's whole postings still give
-- each lexeme's df, only the asked documents are summed).
-- Parameters: those of scored.sql, %(doc_ords)s (int[]).
-- Returns: (doc_ord, units).
WITH {removed}{scored}
SELECT o.doc_ord, coalesce(s.units, 0)::int8
FROM unnest(%(doc_ords)s::int[]) AS o(doc_ord)
LEFT JOIN {scored_name} AS s ON s.doc_ord = o.doc_ord
