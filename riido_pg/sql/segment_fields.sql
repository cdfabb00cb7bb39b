-- segment_fields.sql: the name and kind postings of a new segment (migrations 0010, 0011).
--
-- name: the lexemes of each document's name (riido.name_words of its id: a function's
-- path and qualified name) under the load's text search configuration, with tf and dl
-- as segment_postings.sql keeps them for the body's columns. kind: one row, lexeme
-- 'test', listing the documents whose id's path part is a test path or whose
-- qualified name lies in a test module, or Rust functions (a .rs path part) whose
-- text's leading lines carry a test attribute (riido.test_document of migration
-- 0023 over the id and the stored text, its regular expression
-- riido_pg.fields.TEST_ATTRIBUTE; written out here: migration 0016 writes segments
-- with this file before 0022 exists), and one, lexeme 'example', listing those whose path part lies in
-- a documentation, example or benchmark directory (riido.example_path). Both read the load's numbered {stage} like the body's postings,
-- and depend on nothing but the document id and its text: a segment serves every
-- snapshot holding it.
-- The name rows list the documents the load drops from its base as
-- segment_postings.sql does ({gone}: their names' lexemes).
-- Parameters: %(segment)s, %(load)s, %(text_config)s, and those of gone_lexemes.sql
-- when {gone} is that.
WITH named AS (
    INSERT INTO riido.postings (segment_id, col, lexeme, doc_ords, tfs, dls, gone)
    SELECT %(segment)s::uuid, 'name', coalesce(n.lexeme, g.lexeme),
           coalesce(n.doc_ords, ARRAY[]::int[]), coalesce(n.tfs, ARRAY[]::smallint[]),
           coalesce(n.dls, ARRAY[]::int[]), g.doc_ords
    FROM (
        SELECT u.lexeme, array_agg(s.doc_ord) AS doc_ords,
               array_agg(cardinality(u.positions)::smallint) AS tfs, array_agg(v.len) AS dls
        FROM {stage} AS s
        CROSS JOIN LATERAL (
            SELECT x.tsv, (SELECT coalesce(sum(cardinality(y.positions)), 0)
                           FROM unnest(x.tsv) AS y)::int AS len
            FROM (SELECT to_tsvector(%(text_config)s::regconfig, riido.name_words(s.doc_id))
                         AS tsv
                  OFFSET 0) AS x  -- a fence: one to_tsvector per document
        ) AS v
        CROSS JOIN LATERAL unnest(v.tsv) AS u
        WHERE s.load = %(load)s
        GROUP BY u.lexeme
    ) AS n
    FULL JOIN ({gone}) AS g ON g.lexeme = n.lexeme
    RETURNING 1
),
tested AS (
    INSERT INTO riido.postings (segment_id, col, lexeme, doc_ords, tfs, dls)
    SELECT %(segment)s::uuid, 'kind', 'test', array_agg(s.doc_ord ORDER BY s.doc_ord),
           array_agg(1::smallint), array_agg(1)
    FROM {stage} AS s
    WHERE s.load = %(load)s
      AND (riido.test_path(split_part(s.doc_id, ':', 1))
           OR regexp_replace(s.doc_id, ':[0-9]+(#[0-9]+)?$', '')
              ~ ':([^:]*[.])?([A-Za-z0-9_]*_)?tests?[.][^:]*$'
           OR (right(split_part(s.doc_id, ':', 1), 3) = '.rs'
               AND EXISTS (
                   SELECT 1 FROM riido.texts AS t
                   WHERE t.key = s.text_key
                     AND t.body ~ '^(?:[ \t]*(?://|/\*|\*|#!?\[)[^\n]*\n|[ \t]*\n)*[ \t]*#\[[ \t]*(?:(?:[A-Za-z_][A-Za-z0-9_]*[ \t]*::[ \t]*)*[A-Za-z0-9_]*test[ \t]*[](]|cfg[ \t]*\([ \t]*test[ \t]*\)[ \t]*\])')))
    HAVING count(*) > 0
    RETURNING 1
)
INSERT INTO riido.postings (segment_id, col, lexeme, doc_ords, tfs, dls)
SELECT %(segment)s::uuid, 'kind', 'example', array_agg(s.doc_ord ORDER BY s.doc_ord),
       array_agg(1::smallint), array_agg(1)
FROM {stage} AS s
WHERE s.load = %(load)s AND riido.example_path(split_part(s.doc_id, ':', 1))
HAVING count(*) > 0
