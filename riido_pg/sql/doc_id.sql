-- doc_id.sql: a value of document t.doc_ord of a snapshot's path (its id; a column of
-- its text's row through {join}), as a scalar subquery: the segment holding that ord
-- (segments of one path hold disjoint ranges of ords), then one look-up on
-- riido.documents' primary key (segment_id, doc_ord), whatever the planner believes
-- of the row counts. A join here let statistics taken before a big load (a scratch
-- snapshot of a hints request is never analysed) choose a nested loop that read every
-- document for every match.
-- Parameters: %(segments)s (uuid[]).
SELECT {value} FROM riido.documents AS d{join}
WHERE d.segment_id = (
          SELECT g.segment_id FROM riido.segments AS g
          WHERE g.segment_id = ANY(%(segments)s::uuid[])
            AND t.doc_ord >= g.first_ord AND t.doc_ord < g.first_ord + g.documents
      )
  AND d.doc_ord = t.doc_ord
