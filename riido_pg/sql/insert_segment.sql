-- insert_segment.sql: the row of a load's new segment, with its document count and
-- its documents' summed lengths per column (each text's len_*: README "Ranking"'s
-- dl), from the load's numbered stage (stage_documents.sql).
-- Parameters: %(segment)s, %(first_ord)s, %(load)s.
INSERT INTO riido.segments (segment_id, first_ord, documents, len_raw, len_ident)
SELECT %(segment)s::uuid, %(first_ord)s, count(*),
       coalesce(sum(t.len_raw), 0), coalesce(sum(t.len_ident), 0)
FROM {stage} AS s
JOIN riido.texts AS t ON t.key = s.text_key
WHERE s.load = %(load)s
