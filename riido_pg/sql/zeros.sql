-- zeros.sql: the documents of a snapshot that {matched} (a CTE with doc_ord) does not
-- hold, in id byte order, at most {count} of them (NULL: all): the zero-score tail of
-- every ranking (README "Ranking": documents matching no query lexeme follow with
-- score 0, in id order). Composed by riido_pg.ranking.bm25, with {keep} the filter on
-- d.doc_ord that leaves out what the snapshot removed (empty when nothing was).
--
-- Each segment of the path is read in its (segment_id, doc_id) index order and stops
-- after {count} rows, and the segments' rows are merged: a top-K reads about K
-- documents per segment, never the whole snapshot.
-- Parameters: %(segments)s (uuid[]).
zeros AS (
    SELECT z.doc_ord, z.doc_id
    FROM unnest(%(segments)s::uuid[]) AS g(segment_id)
    CROSS JOIN LATERAL (
        SELECT d.doc_ord, d.doc_id
        FROM riido.documents AS d
        WHERE d.segment_id = g.segment_id
          {keep}
          -- a hashed subplan, built once: the planner cannot tell how many documents
          -- matched (it takes a CTE of unnested arrays for a few rows), and an
          -- anti-join it plans on that guess rescans the matches for every document
          AND d.doc_ord NOT IN (SELECT m.doc_ord FROM {matched} AS m)
        ORDER BY d.doc_id
        LIMIT {count}
    ) AS z
    ORDER BY z.doc_id
    LIMIT {count}
)
