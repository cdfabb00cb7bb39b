-- segment_gone.sql: the gone postings of a new segment, whose snapshot is stored on a
-- base and drops some of the base's documents (README "Snapshots on a base").
--
-- For each column a query scores (raw, ident, and the name field), one row per lexeme
-- under col 'gone_raw' | 'gone_ident' | 'gone_name': the doc_ords (ascending) of the
-- dropped documents holding it. tfs and dls stay empty: a gone row is only counted
-- (its length is subtracted from the lexeme's df) and its doc_ords left out of the
-- scores (sql/scored.sql). A snapshot's removed documents are its base's plus those
-- it drops, so the gone rows of the segments of its path list each removed document
-- under each of its lexemes exactly once: a lexeme's df is its postings rows' lengths
-- less its gone rows' lengths, and a query reads only the removed documents that
-- hold one of its lexemes, not the whole removed set.
-- The dropped documents' lexemes come from their texts' tsvectors and, for the name
-- field, from riido.name_words of their ids under the load's text configuration, as
-- segment_postings.sql and segment_fields.sql stored them.
-- Parameters: %(segment)s (the new segment), %(path)s (the base's path, uuid[]),
-- %(gone)s (the dropped doc_ords, int[]), %(text_config)s.
WITH gone AS MATERIALIZED (
    SELECT d.doc_ord, d.doc_id, d.text_key
    FROM riido.documents AS d
    WHERE d.segment_id = ANY(%(path)s::uuid[]) AND d.doc_ord = ANY(%(gone)s::int[])
)
INSERT INTO riido.postings (segment_id, col, lexeme, doc_ords, tfs, dls)
SELECT %(segment)s::uuid, c.col, u.lexeme, array_agg(g.doc_ord ORDER BY g.doc_ord),
       ARRAY[]::smallint[], ARRAY[]::int[]
FROM gone AS g
JOIN riido.texts AS t ON t.key = g.text_key
CROSS JOIN LATERAL (
    VALUES ('gone_raw', t.tsv_raw),
           ('gone_ident', t.tsv_ident),
           ('gone_name', to_tsvector(%(text_config)s::regconfig, riido.name_words(g.doc_id)))
) AS c(col, tsv)
CROSS JOIN LATERAL unnest(c.tsv) AS u
GROUP BY c.col, u.lexeme
