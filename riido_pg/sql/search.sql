-- search.sql: riido.search, ranking a stored snapshot from SQL (docs/search-from-sql.md).
--
-- Installed by migrations/versions/0012_search.py together with two things it
-- generates from riido_pg when it runs: riido.split_chars (the Unicode classes the
-- identifier splitter reads) and riido.search_settings() (the policies it ranks, their
-- constants and the query limits). Plain SQL and PL/pgSQL, STABLE: nothing is written,
-- so it runs on a hot standby and for the reader role of `riido-pg db grant-reader`.
--
-- The Python API ranks with riido_pg.splitting, riido_pg.ranking.interleave and the
-- statements of sql/rank*.sql; the functions here compute the same things in the
-- database and tests/test_sql_search.py holds the two to the same ids, order and
-- scores. Errors carry SQLSTATEs an application can branch on:
--   22004  a NULL argument              2201W  k < 1
--   54000  the query is over the limit  RI001  no such snapshot
--   RI002  the snapshot is not ready    RI003  unknown policy (or a label, or a
--   RI004  hints missing, unexpected         learned policy SQL cannot run)
--          or naming an unknown id      RI005  the snapshot is on a shard and this
--                                              server cannot reach it (no dblink)

-- Identifier splitting, riido_pg.splitting.split_identifiers: classes of the NFC text
-- ("A" capital, "a" other letter, "s" the letter s, "0" decimal digit, " " anything
-- else; a combining mark after a word character belongs to it), parts where the
-- regular expression of riido_pg.splitting starts a new match (the same rules written
-- as a test of each character's neighbours), each part lowercased as Python lowercases
-- (final sigma included) and NFC-normalized, joined by single spaces.
CREATE OR REPLACE FUNCTION riido.split_identifiers(input text) RETURNS text
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE AS $$
BEGIN
RETURN (
WITH t AS (
    SELECT octet_length(input) = char_length(input) AS ascii,
           CASE WHEN octet_length(input) = char_length(input) THEN input
                ELSE normalize(input, NFC) END AS s
),
chars AS (
    SELECT u.i, u.ch, ascii(u.ch) AS cp
    FROM t CROSS JOIN LATERAL unnest(string_to_array(t.s, NULL)) WITH ORDINALITY AS u(ch, i)
),
classed AS (
    SELECT c.i, c.cp,
           CASE WHEN c.cp BETWEEN 65 AND 90 THEN 'A'
                WHEN c.cp = 115 THEN 's'
                WHEN c.cp BETWEEN 97 AND 122 THEN 'a'
                WHEN c.cp BETWEEN 48 AND 57 THEN '0'
                WHEN c.cp < 128 THEN ' '
                ELSE coalesce(r.cls, ' ') END AS cls,
           CASE WHEN c.cp BETWEEN 65 AND 90 THEN chr(c.cp + 32)
                WHEN c.cp < 128 OR r.cls IS NULL THEN c.ch
                ELSE coalesce(r.lower_text, chr(c.cp + r.lower_delta)) END AS low,
           CASE WHEN c.cp BETWEEN 65 AND 90 OR c.cp BETWEEN 97 AND 122 THEN 'c'
                WHEN c.cp < 128 THEN 'n'
                ELSE coalesce(r.sigma, 'n') END AS sig
    FROM chars AS c
    LEFT JOIN LATERAL (
        SELECT x.cls, x.lower_delta, x.lower_text, x.sigma, x.hi
        FROM riido.split_chars AS x
        WHERE c.cp >= 128 AND x.lo <= c.cp
        ORDER BY x.lo DESC
        LIMIT 1
    ) AS r ON c.cp <= r.hi
),
marked AS (
    -- a mark ("m") after a word character is part of it: it gets no class of its own
    SELECT m.*, m.cls = 'm' AND m.prev IS NOT NULL AND m.prev <> ' ' AS joined
    FROM (SELECT c.*, lag(c.cls) OVER (ORDER BY c.i) AS prev FROM classed AS c) AS m
),
kept AS (
    SELECT k.i, k.k,
           lag(k.k) OVER w AS p, lead(k.k) OVER w AS n1, lead(k.k, 2) OVER w AS n2
    FROM (SELECT m.i, CASE WHEN m.cls = 'm' THEN 'a' ELSE m.cls END AS k
          FROM marked AS m WHERE NOT m.joined) AS k
    WINDOW w AS (ORDER BY k.i)
),
starts AS (
    SELECT k.i,
           k.k <> ' ' AND (
               k.p IS NULL OR k.p = ' '
               OR (k.k = '0') <> (k.p = '0')
               OR (k.k = 'A' AND k.p IN ('a', 's'))
               OR (k.k = 'A' AND k.p = 'A' AND coalesce(k.n1 IN ('a', 's'), false)
                   AND NOT (k.n1 = 's' AND NOT coalesce(k.n2 IN ('a', 's'), false)))
           ) AS start,
           k.k <> ' ' AS word
    FROM kept AS k
),
members AS (
    SELECT x.i, x.cp, x.low, x.sig, x.part
    FROM (
        SELECT m.i, m.cp, m.low, m.sig, coalesce(s.word, m.joined) AS inside,
               sum(CASE WHEN s.start THEN 1 ELSE 0 END) OVER (ORDER BY m.i) AS part
        FROM marked AS m LEFT JOIN starts AS s ON s.i = m.i
    ) AS x
    WHERE x.inside
),
lowered AS (
    SELECT m.part, m.i,
           CASE WHEN m.cp <> 931 THEN m.low
                -- capital sigma: final (after a cased letter, before none, case-
                -- ignorable characters skipped both ways, inside its part)
                WHEN (SELECT b.sig FROM members AS b WHERE b.part = m.part AND b.i < m.i
                      AND b.sig <> 'i' ORDER BY b.i DESC LIMIT 1) = 'c'
                 AND coalesce((SELECT f.sig FROM members AS f WHERE f.part = m.part
                      AND f.i > m.i AND f.sig <> 'i' ORDER BY f.i LIMIT 1), 'n') <> 'c'
                THEN chr(962) ELSE chr(963) END AS ch
    FROM members AS m
),
parts AS (
    SELECT l.part, string_agg(l.ch, '' ORDER BY l.i) AS word FROM lowered AS l GROUP BY l.part
)
SELECT coalesce(string_agg(CASE WHEN t.ascii THEN p.word ELSE normalize(p.word, NFC) END,
                           ' ' ORDER BY p.part), '')
FROM parts AS p CROSS JOIN t
);
END
$$;

-- Interleave, riido_pg.ranking.interleave.iter_interleave: alternate, first leading,
-- skipping ids already emitted (a skip does not use up its list's turn); when one list
-- runs out the rest of the other follows; at most max_items ids (NULL: all). Short
-- lists search the ids emitted so far; long ones drop each list's repeats first, and
-- then an id of one list was emitted before exactly when the other list has already
-- passed it, so each step is one comparison of positions.
CREATE OR REPLACE FUNCTION riido.interleave(first anyarray, second anyarray, max_items bigint DEFAULT NULL)
RETURNS anyarray LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    a first%TYPE;
    b first%TYPE;
    result first%TYPE := '{}';
    a_in_b integer[];
    b_in_a integer[];
    na integer;
    nb integer;
    i integer := 1;
    j integer := 1;
    emitted bigint := 0;
    take_first boolean := true;
    short constant boolean :=
        coalesce(cardinality(first), 0) + coalesce(cardinality(second), 0) <= 64;
BEGIN
    IF short THEN
        -- short lists (a top k): the rule as written, the emitted ids searched
        a := coalesce(first, '{}');
        b := coalesce(second, '{}');
    ELSIF (SELECT count(*) FROM (SELECT DISTINCT u.v FROM unnest(first) AS u(v)) AS d)
              = cardinality(first)
          AND (SELECT count(*) FROM (SELECT DISTINCT u.v FROM unnest(second) AS u(v)) AS d)
              = cardinality(second) THEN
        -- long ones without repeats (a ranking's lists): where each id stands in the
        -- other list, one join each way
        a := first;
        b := second;
        SELECT array_agg(y.o::integer ORDER BY x.o) INTO a_in_b
        FROM unnest(first) WITH ORDINALITY AS x(v, o)
        LEFT JOIN unnest(second) WITH ORDINALITY AS y(v, o) ON y.v = x.v;
        SELECT array_agg(x.o::integer ORDER BY y.o) INTO b_in_a
        FROM unnest(second) WITH ORDINALITY AS y(v, o)
        LEFT JOIN unnest(first) WITH ORDINALITY AS x(v, o) ON x.v = y.v;
    ELSE
        -- long ones: each list without its repeats, and where each id stands in the
        -- other list
        WITH x AS (
            SELECT d.v, row_number() OVER (ORDER BY d.o) AS p
            FROM (SELECT u.v, min(u.o) AS o FROM unnest(first) WITH ORDINALITY AS u(v, o)
                  GROUP BY u.v) AS d
        ),
        y AS (
            SELECT d.v, row_number() OVER (ORDER BY d.o) AS p
            FROM (SELECT u.v, min(u.o) AS o FROM unnest(second) WITH ORDINALITY AS u(v, o)
                  GROUP BY u.v) AS d
        )
        SELECT coalesce((SELECT array_agg(x.v ORDER BY x.p) FROM x), '{}'),
               (SELECT array_agg(y.p::integer ORDER BY x.p) FROM x LEFT JOIN y ON y.v = x.v),
               coalesce((SELECT array_agg(y.v ORDER BY y.p) FROM y), '{}'),
               (SELECT array_agg(x.p::integer ORDER BY y.p) FROM y LEFT JOIN x ON x.v = y.v)
        INTO a, a_in_b, b, b_in_a;
    END IF;
    na := cardinality(a);
    nb := cardinality(b);
    WHILE (i <= na OR j <= nb) AND (max_items IS NULL OR emitted < max_items) LOOP
        IF (take_first AND i <= na) OR j > nb THEN
            IF (CASE WHEN short THEN NOT a[i] = ANY (result)
                     ELSE a_in_b[i] IS NULL OR a_in_b[i] >= j END) THEN
                result := array_append(result, a[i]);
                emitted := emitted + 1;
                take_first := NOT take_first;
            END IF;
            i := i + 1;
        ELSE
            IF (CASE WHEN short THEN NOT b[j] = ANY (result)
                     ELSE b_in_a[j] IS NULL OR b_in_a[j] >= i END) THEN
                result := array_append(result, b[j]);
                emitted := emitted + 1;
                take_first := NOT take_first;
            END IF;
            j := j + 1;
        END IF;
    END LOOP;
    RETURN result;
END
$$;

-- riido_pg.baseline_first and riido_pg.auxiliary_first: the interleave of a baseline
-- (no repeats) with hints naming only baseline ids, or SQLSTATE 22023.
CREATE OR REPLACE FUNCTION riido.check_interleave(baseline anyarray, hints anyarray) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    stray text;
    repeated boolean := false;
BEGIN
    IF baseline IS NULL OR hints IS NULL THEN
        RAISE EXCEPTION 'baseline and hints must not be NULL' USING ERRCODE = '22004';
    END IF;
    IF cardinality(baseline) <= 64 THEN
        FOR i IN 2 .. cardinality(baseline) LOOP
            repeated := repeated OR baseline[i] = ANY (baseline[1:i - 1]);
        END LOOP;
    ELSE
        repeated := (SELECT count(DISTINCT v) FROM unnest(baseline) AS x(v))
                    <> cardinality(baseline);
    END IF;
    IF repeated THEN
        RAISE EXCEPTION 'baseline has duplicate ids' USING ERRCODE = '22023';
    END IF;
    IF NOT hints <@ baseline OR array_position(hints, NULL) IS NOT NULL THEN
        SELECT h.v::text INTO stray FROM unnest(hints) AS h(v)
        WHERE h.v IS NULL OR h.v <> ALL (baseline) LIMIT 1;
        RAISE EXCEPTION 'hint % is not in the baseline', quote_nullable(stray)
            USING ERRCODE = '22023';
    END IF;
    RETURN true;
END
$$;

CREATE OR REPLACE FUNCTION riido.baseline_first(baseline anyarray, hints anyarray) RETURNS anyarray
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT CASE WHEN riido.check_interleave(baseline, hints) THEN riido.interleave(baseline, hints) END
$$;

CREATE OR REPLACE FUNCTION riido.auxiliary_first(baseline anyarray, hints anyarray) RETURNS anyarray
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT CASE WHEN riido.check_interleave(baseline, hints) THEN riido.interleave(hints, baseline) END
$$;

-- Whether one column's units may be summed as float8: no sum of a document's units
-- (one per query lexeme, each at most ln(2N + 2) * 2^40 rounded) can reach 2^53, so
-- every partial sum is an exact integer, the same as the int8 sum
-- (riido_pg.ranking.bm25).
CREATE OR REPLACE FUNCTION riido.search_exact(a_n bigint, a_k1 float8, a_b float8, a_lexemes integer)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT a_k1 >= 0 AND a_b BETWEEN 0 AND 1
   AND a_lexemes * (ln(2 * greatest(a_n, 0) + 2) * (1 + 1e-9)
                    * (SELECT c.scale FROM riido.search_settings() AS c) + 1) < 2::float8 ^ 53
$$;

-- The pieces of riido.search's statements for a snapshot that removed documents from
-- its path (a_removed): what a postings row "p" adds to its lexeme's df (its length,
-- less its gone list's: the df of sql/scored.sql), and the CTE a_name of the removed
-- documents holding one of the query's lexemes (the gone lists of the CTE a_terms).
CREATE OR REPLACE FUNCTION riido.search_kept_sql(a_removed boolean) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT CASE WHEN a_removed THEN 'cardinality(p.doc_ords) - coalesce(cardinality(p.gone), 0)'
            ELSE 'cardinality(p.doc_ords)' END
$$;

CREATE OR REPLACE FUNCTION riido.search_gone_sql(a_name text, a_terms text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT format('
%1$I AS MATERIALIZED (SELECT unnest(t.gone) AS doc_ord FROM %2$I AS t),', a_name, a_terms)
$$;

-- The CTEs of one column's BM25 scores of the documents matching the query, as
-- sql/scored.sql composes them, for the statements riido.search runs: a_name_terms,
-- a_name_gone when the snapshot removed documents, a_name_entries and a_name
-- (doc_ord, units). The text refers to $1 (the path's segments), $3 (N), $5 (k1) and
-- $10 (the scale); a_len, a_lex and a_b are the column's length, lexemes and b (a
-- $-reference or a literal); a_only, if given, restricts the entries to those
-- doc_ords.
CREATE OR REPLACE FUNCTION riido.search_column_sql(
    a_name text, a_col text, a_len text, a_lex text, a_b text, a_removed boolean,
    a_exact boolean, a_only text DEFAULT NULL
) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT format($f$
%1$I AS MATERIALIZED (
    SELECT y.lexeme, y.doc_ords, y.tfs, y.dls, y.gone,
           ln(1 + ($3::float8 - y.df + 0.5) / (y.df + 0.5)) AS idf,
           %5$s::float8 / $3::float8 AS avgdl
    FROM (
        SELECT p.lexeme, p.doc_ords, p.tfs, p.dls, p.gone,
               (sum(%6$s) OVER (PARTITION BY p.lexeme))::float8 AS df
        FROM unnest(%3$s) AS q(lexeme)
        JOIN riido.postings AS p
          ON p.segment_id = ANY($1) AND p.col = %4$L AND p.lexeme = q.lexeme
    ) AS y
),%12$s
%2$I AS (
    SELECT u.doc_ord,
           (u.idf * u.tf / (u.tf + $5 * (1 - %7$s + %7$s * u.dl / u.avgdl)) * $10)::int8
             AS units
    FROM (
        SELECT t.idf, t.avgdl,
               unnest(t.doc_ords) AS doc_ord, unnest(t.tfs) AS tf, unnest(t.dls) AS dl
        FROM %1$I AS t
    ) AS u
    %8$s
),
%9$I AS MATERIALIZED (
    SELECT e.doc_ord, %10$s AS units FROM %2$I AS e GROUP BY e.doc_ord %11$s
)$f$,
    a_name || '_terms', a_name || '_entries', a_lex, a_col, a_len,
    riido.search_kept_sql(a_removed),
    a_b,
    CASE WHEN a_only IS NULL THEN '' ELSE format('WHERE u.doc_ord = ANY (%s)', a_only) END,
    a_name,
    CASE WHEN a_exact THEN 'sum(e.units::float8)::int8' ELSE 'sum(e.units)::int8' END,
    CASE WHEN a_removed
         THEN format('HAVING e.doc_ord NOT IN (SELECT g.doc_ord FROM %I AS g)', a_name || '_gone')
         ELSE '' END,
    CASE WHEN a_removed THEN riido.search_gone_sql(a_name || '_gone', a_name || '_terms')
         ELSE '' END)
$$;

-- A value of document t.doc_ord of the path $1 (sql/doc_id.sql): a_value, an
-- expression over d (its riido.documents row) and what a_join joins to it; by default
-- its id. The text of a scalar subquery for the statements composed here: read
-- inline, not through a PL/pgSQL function, which costs a call per document (at a
-- million functions, 55 ms for the 161 documents tied in one question's top).
CREATE OR REPLACE FUNCTION riido.search_doc_id_sql(
    a_value text DEFAULT 'd.doc_id', a_join text DEFAULT ''
) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT format($f$(
    SELECT %s FROM riido.documents AS d %s
    WHERE d.segment_id = (
              SELECT g.segment_id FROM riido.segments AS g
              WHERE g.segment_id = ANY($1)
                AND t.doc_ord >= g.first_ord AND t.doc_ord < g.first_ord + g.documents)
      AND d.doc_ord = t.doc_ord)$f$, a_value, a_join)
$$;

-- One column's matches (CTE a_scored) numbered in its ranking's order, score
-- descending then id, as riido_pg.ranking.bm25._ranked numbers them for
-- identifier_bm25_rrf's sql/rank_score.sql: the id (sql/doc_id.sql inline) is read only for a document whose
-- score another shares, and not at all in a path of one segment, which numbers its
-- documents in id byte order.
CREATE OR REPLACE FUNCTION riido.search_ranked_sql(a_scored text, a_segments integer)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT CASE WHEN a_segments = 1 THEN format($f$
    SELECT t.doc_ord, t.units, row_number() OVER (ORDER BY t.units DESC, t.doc_ord) AS r
    FROM %1$I AS t$f$, a_scored)
ELSE format($f$
    SELECT x.doc_ord, x.units, row_number() OVER (ORDER BY x.units DESC, x.doc_id) AS r
    FROM (SELECT t.doc_ord, t.units,
                 CASE WHEN t.tied THEN %2$s END AS doc_id
          FROM (SELECT s.doc_ord, s.units,
                       count(*) OVER (PARTITION BY s.units) > 1 AS tied
                FROM %1$I AS s) AS t) AS x$f$, a_scored, riido.search_doc_id_sql())
END
$$;

-- The first a_k of a fusion (sql/rank_score.sql with the fused, RRF or structure
-- policy's score, riido_pg.ranking.policy),
-- in one statement as the Python API runs it: each column's scores
-- (riido.search_column_sql), the policy's score of every match, the bounded top-k
-- with every document tied with the last (sql/rank_tail.sql), then the zero tail in
-- id order. a_w1..a_w5 are the policy's constants: fused w; RRF k; structure w_ident,
-- w_name, the test and example priors and the name match factor (a_config: the
-- snapshot's text search configuration, which structure reads qualified names with;
-- a_w6: structure's length prior exponent; a_recent: the snapshot's recently changed
-- documents, a_w7: the recency prior's factor; a_snapshot: the snapshot, whose window
-- of past commits (riido.window_commits) the history-similarity prior reads, a_w8: its
-- β (0 or NULL: off), a_w9 and a_w10: BM25's k1 and b for the window's subjects; a_w11:
-- the change-history prior's γ (0 or NULL: off), read from the same window, a_w12: its
-- decay's τ).
-- Rows (doc_ord, score, raw units, identifier units, name units: structure's name
-- field, 0 for the others; the id, which the order needs anyway) in rank order.
CREATE OR REPLACE FUNCTION riido.search_fusion(
    a_segments uuid[], a_removed integer[], a_n bigint, a_len_raw bigint, a_k1 float8,
    a_b float8, a_raw text[], a_len_ident bigint, a_ident text[], a_k integer,
    a_policy text, a_w1 float8, a_w2 float8 DEFAULT NULL, a_w3 float8 DEFAULT NULL,
    a_w4 float8 DEFAULT NULL, a_w5 float8 DEFAULT NULL, a_config regconfig DEFAULT NULL,
    a_w6 float8 DEFAULT NULL, a_recent integer[] DEFAULT NULL, a_w7 float8 DEFAULT NULL,
    a_snapshot text DEFAULT NULL, a_w8 float8 DEFAULT NULL, a_w9 float8 DEFAULT NULL,
    a_w10 float8 DEFAULT NULL, a_w11 float8 DEFAULT NULL, a_w12 float8 DEFAULT NULL
) RETURNS TABLE (
    doc_ord integer, score float8, raw bigint, ident bigint, name bigint, doc_id text
)
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
    removed constant boolean := cardinality(a_removed) > 0;
    exact_raw constant boolean := riido.search_exact(a_n, a_k1, a_b, cardinality(a_raw));
    exact_ident constant boolean :=
        riido.search_exact(a_n, a_k1, a_b, cardinality(a_ident));
    stmt text;
    -- the history-similarity prior (riido_pg.ranking.policy.structure's _HISTORY): its
    -- CTEs, and the factor and join the bar, the bounds and the score take
    -- and the change-history prior's (_CHANGE), the factors in that order
    history constant boolean := a_policy = 'structure_bm25' AND coalesce(a_w8, 0) <> 0;
    change constant boolean := a_policy = 'structure_bm25' AND coalesce(a_w11, 0) <> 0;
    h_factor constant text := CASE WHEN history THEN ' * coalesce(h.factor, 1::float8)'
                                   ELSE '' END
                              || CASE WHEN change THEN ' * coalesce(ch.factor, 1::float8)'
                                      ELSE '' END;
    h_join constant text := CASE WHEN history
                                 THEN ' LEFT JOIN history AS h ON h.doc_ord = x.doc_ord'
                                 ELSE '' END
                            || CASE WHEN change
                                    THEN ' LEFT JOIN change AS ch ON ch.doc_ord = x.doc_ord'
                                    ELSE '' END;
BEGIN
    stmt := 'WITH '
        || riido.search_column_sql('scored_raw', 'raw', '$4', '$7', '$6', removed, exact_raw)
        || ','
        || riido.search_column_sql('scored_ident', 'ident', '$8', '$9', '$6', removed,
                                   exact_ident)
        || ',';
    IF a_policy = 'identifier_bm25_fused' THEN
        stmt := stmt || $s$
matched AS (
    SELECT coalesce(r.doc_ord, i.doc_ord) AS doc_ord,
           coalesce(r.units, 0)::float8 / $10
           + $12 * (coalesce(i.units, 0)::float8 / $10) AS score,
           coalesce(r.units, 0) AS raw, coalesce(i.units, 0) AS ident, 0::int8 AS name
    FROM scored_raw AS r FULL JOIN scored_ident AS i ON i.doc_ord = r.doc_ord
),$s$;
    ELSIF a_policy = 'identifier_bm25_rrf' THEN
        -- each column's matches numbered in ranking order, as the RRF policy's
        -- sql/rank_score.sql numbers them (riido_pg.ranking.bm25._ranked): an id is looked up
        -- (sql/doc_id.sql inline) only for a document whose score another shares, and
        -- in a path of one segment not even then (its ords are in id byte order)
        stmt := stmt || format($s$
ranked_raw AS (%1$s),
ranked_ident AS (%2$s),
matched AS (
    SELECT coalesce(a.doc_ord, b.doc_ord) AS doc_ord,
           coalesce(1::float8 / ($12 + a.r), 0::float8)
           + coalesce(1::float8 / ($12 + b.r), 0::float8) AS score,
           coalesce(a.units, 0) AS raw, coalesce(b.units, 0) AS ident, 0::int8 AS name
    FROM ranked_raw AS a FULL JOIN ranked_ident AS b ON b.doc_ord = a.doc_ord
),$s$, riido.search_ranked_sql('scored_raw', cardinality(a_segments)),
        riido.search_ranked_sql('scored_ident', cardinality(a_segments)));
    ELSE
        -- structure_bm25: the name field is the identifier query against each
        -- document's name, BM25 with b = 0 (its length never read: N stands in);
        -- the length prior and the name match as riido_pg.ranking.policy.structure's
        -- lengths and qualified (a raw length, len_raw, read by primary key), each
        -- looked at only for the documents that may reach the first a_k with them (bar)
        stmt := stmt
            || riido.search_column_sql('scored_name', 'name', '$3', '$9', '0::float8',
                                       removed, exact_ident)
            || $s$,
kinds AS MATERIALIZED (
    SELECT coalesce(k.doc_ord, r.doc_ord) AS doc_ord,
           coalesce(k.prior, 1::float8)
           * CASE WHEN r.doc_ord IS NULL OR k.prior < 1::float8 THEN 1::float8
                  ELSE $20 END AS prior
    FROM (
        SELECT u.doc_ord,
               min(CASE p.lexeme WHEN 'test' THEN $14 ELSE $15 END) AS prior
        FROM riido.postings AS p
        CROSS JOIN LATERAL unnest(p.doc_ords) AS u(doc_ord)
        WHERE p.segment_id = ANY($1) AND p.col = 'kind' AND p.lexeme IN ('test', 'example')
        GROUP BY u.doc_ord
    ) AS k
    FULL JOIN unnest($19) AS r(doc_ord) ON r.doc_ord = k.doc_ord
),$s$
            || CASE WHEN NOT history THEN '' ELSE $s$
history_window AS MATERIALIZED (
    SELECT w.position, w.lexemes, w.doc_ords FROM riido.window_commits AS w
    WHERE w.snapshot_id = $21
),
history_idf AS MATERIALIZED (
    SELECT q.i, q.lexeme,
           ln(1::float8 + (s.n - d.df + 0.5::float8) / (d.df + 0.5::float8)) AS idf
    FROM unnest($9) WITH ORDINALITY AS q(lexeme, i)
    CROSS JOIN (SELECT count(*)::float8 AS n FROM history_window) AS s
    CROSS JOIN LATERAL (SELECT count(*)::float8 AS df FROM history_window AS w
                        WHERE q.lexeme = ANY(w.lexemes)) AS d
    WHERE d.df > 0
),
history_sim AS MATERIALIZED (
    SELECT w.position, w.doc_ords,
           sum(x.idf * ($23 + 1::float8)
               / (1::float8 + $23 * (1::float8 - $24 + $24
                  * cardinality(w.lexemes)::float8 / a.avgdl))
               ORDER BY x.i) AS sim
    FROM history_window AS w
    CROSS JOIN (SELECT sum(cardinality(v.lexemes))::float8 / count(*)::float8 AS avgdl
                FROM history_window AS v) AS a
    JOIN history_idf AS x ON x.lexeme = ANY(w.lexemes)
    WHERE a.avgdl > 0 AND cardinality(w.doc_ords) > 0
    GROUP BY w.position, w.doc_ords
),
history_h AS MATERIALIZED (
    SELECT u.doc_ord,
           sum(s.sim / cardinality(s.doc_ords)::float8 ORDER BY s.position) AS h
    FROM history_sim AS s CROSS JOIN LATERAL unnest(s.doc_ords) AS u(doc_ord)
    WHERE s.sim > 0
    GROUP BY u.doc_ord
),
history AS MATERIALIZED (
    SELECT h.doc_ord, 1::float8 + $22 * (h.h / m.top) AS factor
    FROM history_h AS h CROSS JOIN (SELECT max(v.h) AS top FROM history_h AS v) AS m
    WHERE m.top > 0
),$s$ END
            || CASE WHEN NOT change THEN '' ELSE $s$
change_c AS MATERIALIZED (
    SELECT u.doc_ord,
           sum(exp(-w.position::float8 / $26) ORDER BY w.position) AS c
    FROM riido.window_commits AS w CROSS JOIN LATERAL unnest(w.doc_ords) AS u(doc_ord)
    WHERE w.snapshot_id = $21
    GROUP BY u.doc_ord
),
change AS MATERIALIZED (
    SELECT c.doc_ord, 1::float8 + $25 * (c.c / m.top) AS factor
    FROM change_c AS c CROSS JOIN (SELECT max(v.c) AS top FROM change_c AS v) AS m
    WHERE m.top > 0
),$s$ END
            || $s$
sums AS (
    SELECT coalesce(r.doc_ord, i.doc_ord) AS doc_ord,
           coalesce(r.units, 0) AS raw, coalesce(i.units, 0) AS ident
    FROM scored_raw AS r FULL JOIN scored_ident AS i ON i.doc_ord = r.doc_ord
),
summed AS MATERIALIZED (
    SELECT coalesce(s.doc_ord, n.doc_ord) AS doc_ord,
           coalesce(s.raw, 0) AS raw, coalesce(s.ident, 0) AS ident,
           coalesce(n.units, 0) AS name,
           coalesce(s.raw, 0)::float8 / $10
           + $12 * (coalesce(s.ident, 0)::float8 / $10)
           + $13 * (coalesce(n.units, 0)::float8 / $10) AS fields,
           coalesce(t.prior, 1::float8) AS prior
    FROM sums AS s
    FULL JOIN scored_name AS n ON n.doc_ord = s.doc_ord
    LEFT JOIN kinds AS t ON t.doc_ord = coalesce(s.doc_ord, n.doc_ord)
),
bar AS (
    SELECT x.fields * x.prior$s$ || h_factor || $s$ AS score FROM summed AS x$s$ || h_join || $s$
    ORDER BY 1 DESC OFFSET $11 - 1 LIMIT 1
),
lengths AS MATERIALIZED (
    SELECT t.doc_ord,
           power(1::float8 + ln(1::float8 + $s$
            || riido.search_doc_id_sql('x.len_raw', 'JOIN riido.texts AS x ON x.key = d.text_key')
            || $s$::float8), $18) AS factor
    FROM summed AS t$s$ || replace(h_join, 'x.', 't.') || $s$
    WHERE (t.fields * power(1::float8 + ln(1::float8 + 2147483647::float8), $18)
           * CASE WHEN t.name > 0 THEN $16 ELSE 1::float8 END
           * t.prior$s$ || h_factor || $s$ >= (SELECT b.score FROM bar AS b)) IS NOT FALSE
),
qualified AS MATERIALIZED (
    SELECT t.doc_ord
    FROM summed AS t$s$ || replace(h_join, 'x.', 't.') || $s$
    CROSS JOIN LATERAL (
        SELECT to_tsvector($17, riido.qualified_words($s$ || riido.search_doc_id_sql() || $s$))
               AS tsv
        OFFSET 0
    ) AS v
    WHERE t.name > 0
      AND (t.fields * power(1::float8 + ln(1::float8 + 2147483647::float8), $18) * $16
           * t.prior$s$ || h_factor || $s$ >= (SELECT b.score FROM bar AS b)) IS NOT FALSE
      AND v.tsv <> ''::tsvector AND tsvector_to_array(v.tsv) <@ $9
),
matched AS (
    SELECT x.doc_ord,
           x.fields * coalesce(l.factor, 1::float8)
           * CASE WHEN q.doc_ord IS NULL THEN 1::float8 ELSE $16 END * x.prior$s$
           || h_factor || $s$ AS score,
           x.raw, x.ident, x.name
    FROM summed AS x
    LEFT JOIN lengths AS l ON l.doc_ord = x.doc_ord
    LEFT JOIN qualified AS q ON q.doc_ord = x.doc_ord$s$ || h_join || $s$
),$s$;
    END IF;
    stmt := stmt || $s$
pos AS MATERIALIZED (SELECT m.* FROM matched AS m WHERE m.score > 0),
top AS (
    SELECT p.* FROM pos AS p
    WHERE (p.score >= (SELECT k.score FROM pos AS k ORDER BY k.score DESC
                       OFFSET $11 - 1 LIMIT 1)) IS NOT FALSE
),
named AS (SELECT t.*, $s$ || riido.search_doc_id_sql() || $s$ AS doc_id FROM top AS t),
need AS (SELECT greatest($11 - count(*), 0) AS c FROM named)
SELECT r.doc_ord, r.score, r.raw, r.ident, r.name, r.doc_id
FROM (
    SELECT n.doc_ord, n.doc_id, n.score, n.raw, n.ident, n.name, 0 AS part FROM named AS n
    UNION ALL
    SELECT z.doc_ord, z.doc_id, 0::float8, 0::int8, 0::int8, 0::int8, 1
    FROM need
    CROSS JOIN LATERAL riido.search_zeros(
        $1, $2,
        CASE WHEN need.c > 0
             THEN (SELECT coalesce(array_agg(p.doc_ord), '{}') FROM pos AS p)
             ELSE '{}'::integer[] END,
        need.c) AS z
) AS r
ORDER BY r.part, r.score DESC, r.doc_id
LIMIT $11$s$;
    RETURN QUERY EXECUTE stmt
    USING a_segments, a_removed, a_n, a_len_raw, a_k1, a_b, a_raw, a_len_ident, a_ident,
          (SELECT c.scale FROM riido.search_settings() AS c), a_k::int8, a_w1, a_w2, a_w3,
          a_w4, a_w5, a_config, a_w6, a_recent, a_w7, a_snapshot, a_w8, a_w9, a_w10, a_w11,
          a_w12;
END
$$;

-- One column's BM25 units of the documents of a snapshot matching the query (only
-- those of a_only, when given: sql/scores.sql), exactly as sql/scored.sql computes
-- them (the same float8 expression, rounded to units of 2^-40 and summed as integers;
-- df less the documents the snapshot removed).
CREATE OR REPLACE FUNCTION riido.search_scored(
    a_segments uuid[], a_removed integer[], a_n bigint, a_len bigint, a_k1 float8,
    a_b float8, a_col text, a_lexemes text[], a_only integer[] DEFAULT NULL
) RETURNS TABLE (doc_ord integer, units bigint)
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
    scale constant float8 := (SELECT c.scale FROM riido.search_settings() AS c);
    exact constant boolean := riido.search_exact(a_n, a_k1, a_b, cardinality(a_lexemes));
    removed constant boolean := cardinality(a_removed) > 0;
    -- what each postings row adds to its lexeme's df
    kept constant text := riido.search_kept_sql(removed);
    total constant text :=
        CASE WHEN exact THEN 'sum(e.units::float8)::int8' ELSE 'sum(e.units)::int8' END;
BEGIN
IF a_only IS NOT NULL AND a_col IN ('raw', 'ident') THEN
-- given documents of a body column (sql/scores.sql): tf and dl from each one's own
-- text, df from the postings rows' lengths; no pass over the postings' entries
RETURN QUERY EXECUTE format($q$
WITH terms AS MATERIALIZED (
    SELECT y.lexeme,
           ln(1 + ($3::float8 - y.df + 0.5) / (y.df + 0.5)) AS idf,
           $4::float8 / $3::float8 AS avgdl
    FROM (
        SELECT p.lexeme, (sum(%1$s))::float8 AS df
        FROM unnest($8) AS q(lexeme)
        JOIN riido.postings AS p
          ON p.segment_id = ANY($1) AND p.col = $7 AND p.lexeme = q.lexeme
        GROUP BY p.lexeme
    ) AS y
),
entries AS (
    SELECT u.doc_ord,
           (u.idf * u.tf / (u.tf + $5 * (1 - $6 + $6 * u.dl / u.avgdl)) * $10)::int8
             AS units
    FROM (
        SELECT o.doc_ord, w.idf, w.avgdl, cardinality(x.positions) AS tf, t.%3$I AS dl
        FROM unnest($9) AS o(doc_ord)
        JOIN riido.documents AS d ON d.segment_id = ANY($1) AND d.doc_ord = o.doc_ord
        JOIN riido.texts AS t ON t.key = d.text_key
        CROSS JOIN LATERAL unnest(t.%4$I) AS x
        JOIN terms AS w ON w.lexeme = x.lexeme
    ) AS u
)
SELECT e.doc_ord, %2$s FROM entries AS e GROUP BY e.doc_ord
$q$, kept, total, 'len_' || a_col, 'tsv_' || a_col)
USING a_segments, a_removed, a_n, a_len, a_k1, a_b, a_col, a_lexemes, a_only, scale;
RETURN;
END IF;
-- every matching document (sql/scored.sql: riido.search_column_sql)
RETURN QUERY EXECUTE 'WITH '
    || riido.search_column_sql('scored', a_col, '$4', '$8', '$6', removed, exact,
                               CASE WHEN a_only IS NOT NULL THEN '$9' END)
    || ' SELECT s.doc_ord, s.units FROM scored AS s'
USING a_segments, a_removed, a_n, a_len, a_k1, a_b, a_col, a_lexemes, a_only, scale;
END
$$;

-- The first a_count documents of a snapshot that neither a_matched nor a_removed
-- holds, in id byte order (sql/zeros.sql: the zero-score tail of every ranking).
CREATE OR REPLACE FUNCTION riido.search_zeros(
    a_segments uuid[], a_removed integer[], a_matched integer[], a_count bigint
) RETURNS TABLE (doc_ord integer, doc_id text)
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
#variable_conflict use_column
BEGIN
RETURN QUERY
SELECT z.doc_ord, z.doc_id
FROM unnest(a_segments) AS g(segment_id)
CROSS JOIN LATERAL (
    SELECT d.doc_ord, d.doc_id
    FROM riido.documents AS d
    WHERE d.segment_id = g.segment_id
      AND d.doc_ord NOT IN (SELECT unnest(a_removed))
      AND d.doc_ord NOT IN (SELECT unnest(a_matched))
    ORDER BY d.doc_id
    LIMIT a_count
) AS z
ORDER BY z.doc_id
LIMIT a_count;
END
$$;

-- One column's ranking, its first a_k (sql/rank.sql): the scored documents by units
-- descending, then id; then, when fewer than a_k matched (all of them are then in the
-- top), the zero tail in id order. Rows (doc_ord, units, id: read for the order, and
-- returned so the ranking need not read it again) in rank order.
CREATE OR REPLACE FUNCTION riido.search_column(
    a_segments uuid[], a_removed integer[], a_n bigint, a_len bigint, a_k1 float8,
    a_b float8, a_col text, a_lexemes text[], a_k bigint
) RETURNS TABLE (doc_ord integer, units bigint, doc_id text)
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
    removed constant boolean := cardinality(a_removed) > 0;
BEGIN
    -- one statement, as sql/rank.sql and sql/rank_tail.sql: the column's scores, the
    -- first a_k and every document tied with the last (a sort bounded to a_k rows),
    -- their ids, then the zero tail
    RETURN QUERY EXECUTE 'WITH '
        || riido.search_column_sql(
               'scored', a_col, '$4', '$8', '$6', removed,
               riido.search_exact(a_n, a_k1, a_b, cardinality(a_lexemes)))
        || $s$,
top AS (
    SELECT s.doc_ord, s.units FROM scored AS s
    WHERE (s.units >= (SELECT k.units FROM scored AS k ORDER BY k.units DESC
                       OFFSET $9 - 1 LIMIT 1)) IS NOT FALSE
),
named AS (SELECT t.doc_ord, t.units, $s$ || riido.search_doc_id_sql() || $s$ AS doc_id FROM top AS t),
need AS (SELECT greatest($9 - count(*), 0) AS c FROM named)
SELECT r.doc_ord, r.units, r.doc_id
FROM (
    SELECT n.doc_ord, n.units, n.doc_id, 0 AS part FROM named AS n
    UNION ALL
    SELECT z.doc_ord, 0::int8, z.doc_id, 1
    FROM need
    CROSS JOIN LATERAL riido.search_zeros(
        $1, $2,
        CASE WHEN need.c > 0
             THEN (SELECT coalesce(array_agg(t.doc_ord), '{}') FROM top AS t)
             ELSE '{}'::integer[] END,
        need.c) AS z
) AS r
ORDER BY r.part, r.units DESC, r.doc_id
LIMIT $9$s$
    USING a_segments, a_removed, a_n, a_len, a_k1, a_b, a_col, a_lexemes, a_k,
          (SELECT c.scale FROM riido.search_settings() AS c);
END
$$;

-- The ranking: riido.search's body (riido.search only renames its arguments: an
-- argument and a result column of a PL/pgSQL function may not share a name, and
-- keeps the columns of its contract), and the one statement riido_pg.rank_snapshot
-- runs (riido_pg.ranking.rank.SEARCH): a_k is a bigint (a k past the snapshot's
-- documents ranks them all, as k = their count does), a_forward false answers a
-- snapshot placed on a shard as no snapshot (RI001: the Python API routes to the
-- shard itself), and three more columns give what riido_pg.Ranking holds beside
-- riido.search's: the name field's score (structure_bm25), the snapshot's document
-- count and whether any word of the query is searchable (its raw or identifier-split
-- form has lexemes).
CREATE OR REPLACE FUNCTION riido.search_ranked(
    a_snapshot text, a_query text, a_k bigint, a_policy text, a_hints text[],
    a_forward boolean DEFAULT true
) RETURNS TABLE (
    rank integer, id text, bm25_score float8, identifier_bm25_score float8, policy text,
    score float8, name_bm25_score float8, total integer, searchable boolean
)
LANGUAGE plpgsql STABLE
-- work_mem: the composed path's; jit off: a statement's estimate on arrays of
-- unknown length (k) passes jit_above_cost, and compiling costs more than any of
-- these statements runs (every document at 31,000 functions: 420 ms with, 270 without)
SET work_mem = '32MB' SET jit = off
AS $$
DECLARE
    cfg record;
    snap riido.snapshots%ROWTYPE;
    segs uuid[];
    shard_name text;
    shard_server text;
    link_schema text;
    raw_lex text[];
    ident_text text;
    ident_lex text[];
    chosen text := a_policy;
    label text := a_policy;
    identifier boolean;
    r_ords integer[] := '{}';
    r_units bigint[] := '{}';
    r_ids text[] := '{}';
    i_ords integer[] := '{}';
    i_units bigint[] := '{}';
    i_ids text[] := '{}';
    f_ids text[];
    n_units bigint[];
    f_raw bigint[];
    f_ident bigint[];
    n_k bigint;
    has_words boolean;
    first_list integer[];
    second_list integer[];
    hint_ords integer[];
    missing_ords integer[];
    missing text;
    out_ords integer[];
    out_scores float8[];
    test_prior float8;
    example_prior float8;
BEGIN
    SELECT * INTO cfg FROM riido.search_settings();
    IF a_snapshot IS NULL OR a_query IS NULL OR a_k IS NULL OR a_policy IS NULL THEN
        RAISE EXCEPTION 'riido.search: snapshot, query, k and policy must not be NULL'
            USING ERRCODE = '22004';
    END IF;
    IF a_k < 1 THEN
        RAISE EXCEPTION 'riido.search: k must be at least 1, not %', a_k
            USING ERRCODE = '2201W';
    END IF;
    IF octet_length(a_query) > cfg.max_query_bytes THEN
        RAISE EXCEPTION 'riido.search: the query is % bytes; the limit is %',
            octet_length(a_query), cfg.max_query_bytes USING ERRCODE = '54000';
    END IF;
    IF a_policy = ANY (cfg.labels) THEN
        RAISE EXCEPTION 'riido.search: % is a result label, not a policy to ask for', a_policy
            USING ERRCODE = 'RI003';
    END IF;
    IF a_policy IN ('model_hints_baseline_first', 'model_structure_weighted') THEN
        RAISE EXCEPTION 'riido.search: policy % needs a learned model, which only the Python API runs', a_policy
            USING ERRCODE = 'RI003',
                  HINT = 'rank it with riido_pg.rank_snapshot(..., model=NAME) or `riido-pg query --model NAME` (with `--model-ranking weighted` for model_structure_weighted)';
    END IF;
    -- the policies it ranks: riido_pg.ranking.rank.IN_SQL, written by the migration
    IF NOT a_policy = ANY (cfg.policies) THEN
        RAISE EXCEPTION 'riido.search: unknown policy %; choose one of %',
            quote_literal(a_policy), array_to_string(cfg.policies, ', ')
            USING ERRCODE = 'RI003';
    END IF;
    IF a_policy = 'external_hints_baseline_first' AND a_hints IS NULL THEN
        RAISE EXCEPTION 'riido.search: policy % needs a list of hint ids', a_policy
            USING ERRCODE = 'RI004', HINT = 'pass hints => ARRAY[...]';
    END IF;
    IF a_policy <> 'external_hints_baseline_first' AND a_hints IS NOT NULL THEN
        RAISE EXCEPTION 'riido.search: hints cannot be used with policy %', a_policy
            USING ERRCODE = 'RI004';
    END IF;

    SELECT * INTO snap FROM riido.snapshots AS s WHERE s.snapshot_id = a_snapshot;
    IF NOT FOUND THEN
        SELECT p.shard, h.server INTO shard_name, shard_server
        FROM riido.placements AS p JOIN riido.shards AS h ON h.name = p.shard
        WHERE p.snapshot_id = a_snapshot AND a_forward IS NOT FALSE;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'riido.search: no snapshot %', quote_literal(a_snapshot)
                USING ERRCODE = 'RI001';
        END IF;
        SELECT n.nspname INTO link_schema FROM pg_extension AS e
        JOIN pg_namespace AS n ON n.oid = e.extnamespace WHERE e.extname = 'dblink';
        IF NOT FOUND THEN
            RAISE EXCEPTION 'riido.search: snapshot % is on shard %; this coordinator cannot reach it without the dblink extension',
                quote_literal(a_snapshot), quote_literal(shard_name)
                USING ERRCODE = 'RI005',
                      HINT = 'call riido.search on that shard''s server (`riido-pg shards list` shows it), or CREATE EXTENSION dblink here';
        END IF;
        -- the shard's foreign server and this role's user mapping (riido-pg shards add)
        RETURN QUERY EXECUTE format(
            'SELECT *, NULL::float8, NULL::integer, NULL::boolean FROM %I.dblink($1, $2) '
            'AS t(rank integer, id text, bm25_score float8, identifier_bm25_score float8, '
            'policy text, score float8)', link_schema)
        USING shard_server, format('SELECT * FROM riido.search(%L, %L, %s, %L, %L::text[])',
                                   a_snapshot, a_query, a_k, a_policy, a_hints);
        RETURN;
    END IF;
    IF snap.state <> 'ready' THEN
        RAISE EXCEPTION 'riido.search: snapshot % is not ready: it is still loading, or its load was interrupted',
            quote_literal(a_snapshot) USING ERRCODE = 'RI002',
            HINT = 'query it when the load finishes; run an interrupted load again or drop the snapshot';
    END IF;
    SELECT coalesce(array_agg(p.segment_id ORDER BY p.position), '{}') INTO segs
    FROM riido.snapshot_segments AS p WHERE p.snapshot_id = a_snapshot;
    -- k past the documents ranks them all (every list holds every document)
    n_k := least(a_k, greatest(snap.document_count, 1));

    -- the query's terms (sql/query_lexemes.sql, riido_pg.ranking.terms)
    raw_lex := tsvector_to_array(to_tsvector(snap.text_config::regconfig, a_query));
    identifier := a_policy IN ('identifier_bm25', 'identifier_bm25_baseline_first',
        'identifier_bm25_auxiliary_first', 'identifier_bm25_fused', 'identifier_bm25_rrf',
        'structure_bm25');
    IF identifier OR cardinality(raw_lex) = 0 THEN
        -- only these read the identifier-split query (and whether a query without raw
        -- lexemes has searchable words: riido_pg.ranking.terms.QueryTerms.searchable)
        ident_text := riido.split_identifiers(a_query);
        ident_lex := tsvector_to_array(to_tsvector(snap.text_config::regconfig, ident_text));
    END IF;
    has_words := cardinality(raw_lex) > 0 OR coalesce(cardinality(ident_lex), 0) > 0;

    -- riido_pg.ranking.policies.resolve: the identifier policies fall back to bm25
    IF identifier AND NOT (cardinality(ident_lex) BETWEEN 1 AND cfg.max_identifier_lexemes
                           AND octet_length(ident_text) <= cfg.max_identifier_bytes) THEN
        chosen := 'bm25';
        label := cfg.labels[1];
        identifier := false;
    END IF;

    IF chosen IN ('bm25', 'identifier_bm25', 'identifier_bm25_baseline_first',
                  'identifier_bm25_auxiliary_first', 'external_hints_baseline_first') THEN
        -- each list's first k (what the Python API cuts each list at), with its units
        IF chosen <> 'identifier_bm25' THEN
            SELECT coalesce(array_agg(c.doc_ord ORDER BY c.o), '{}'),
                   coalesce(array_agg(c.units ORDER BY c.o), '{}'),
                   coalesce(array_agg(c.doc_id ORDER BY c.o), '{}')
            INTO first_list, r_units, r_ids
            FROM riido.search_column(segs, snap.removed, snap.document_count, snap.len_raw,
                                     snap.k1, snap.b, 'raw', raw_lex, n_k)
                 WITH ORDINALITY AS c(doc_ord, units, doc_id, o);
            r_ords := first_list;
        END IF;
        IF identifier THEN
            SELECT coalesce(array_agg(c.doc_ord ORDER BY c.o), '{}'),
                   coalesce(array_agg(c.units ORDER BY c.o), '{}'),
                   coalesce(array_agg(c.doc_id ORDER BY c.o), '{}')
            INTO second_list, i_units, i_ids
            FROM riido.search_column(segs, snap.removed, snap.document_count, snap.len_ident,
                                     snap.k1, snap.b, 'ident', ident_lex, n_k)
                 WITH ORDINALITY AS c(doc_ord, units, doc_id, o);
            i_ords := second_list;
        END IF;
        IF chosen = 'external_hints_baseline_first' THEN
            SELECT h.v INTO missing FROM unnest(a_hints) AS h(v)
            WHERE NOT EXISTS (
                SELECT 1 FROM riido.documents AS d
                WHERE d.segment_id = ANY(segs) AND d.doc_id = h.v
                  AND d.doc_ord <> ALL (snap.removed))
            LIMIT 1;
            IF FOUND THEN
                RAISE EXCEPTION 'riido.search: hints name a document not in snapshot %, e.g. %',
                    quote_literal(a_snapshot), quote_nullable(missing) USING ERRCODE = 'RI004';
            END IF;
            SELECT coalesce(array_agg(d.doc_ord ORDER BY h.o), '{}') INTO hint_ords
            FROM unnest(a_hints) WITH ORDINALITY AS h(v, o)
            JOIN riido.documents AS d
              ON d.segment_id = ANY(segs) AND d.doc_id = h.v
             AND d.doc_ord <> ALL (snap.removed);
            out_ords := riido.interleave(first_list, hint_ords, n_k);
        ELSIF chosen = 'bm25' THEN
            out_ords := first_list;
        ELSIF chosen = 'identifier_bm25' THEN
            out_ords := second_list;
        ELSIF chosen = 'identifier_bm25_baseline_first' THEN
            out_ords := riido.interleave(first_list, second_list, n_k);
        ELSE
            out_ords := riido.interleave(second_list, first_list, n_k);
        END IF;
        -- the scores of results one list did not hold (lists.units_of)
        -- (a set difference: hashed or sorted, not a scan of r_ords per result; none
        -- when the list holds every document, or is the result)
        missing_ords := CASE WHEN chosen = 'bm25' OR cardinality(r_ords) >= snap.document_count
                             THEN '{}'
                             ELSE ARRAY(SELECT unnest(out_ords) EXCEPT SELECT unnest(r_ords))
                        END;
        IF cardinality(missing_ords) > 0 THEN
            SELECT r_ords || coalesce(array_agg(x.doc_ord), '{}'),
                   r_units || coalesce(array_agg(x.units), '{}')
            INTO r_ords, r_units
            FROM riido.search_scored(segs, snap.removed, snap.document_count, snap.len_raw,
                                     snap.k1, snap.b, 'raw', raw_lex, missing_ords) AS x;
        END IF;
        missing_ords := CASE WHEN NOT identifier OR chosen = 'identifier_bm25'
                                  OR cardinality(i_ords) >= snap.document_count
                             THEN '{}'
                             ELSE ARRAY(SELECT unnest(out_ords) EXCEPT SELECT unnest(i_ords))
                        END;
        IF cardinality(missing_ords) > 0 THEN
            SELECT i_ords || coalesce(array_agg(x.doc_ord), '{}'),
                   i_units || coalesce(array_agg(x.units), '{}')
            INTO i_ords, i_units
            FROM riido.search_scored(segs, snap.removed, snap.document_count, snap.len_ident,
                                     snap.k1, snap.b, 'ident', ident_lex, missing_ords) AS x;
        END IF;
    ELSE
        -- the fusions, each one statement (riido.search_fusion)
        IF chosen = 'structure_bm25' THEN
            -- the priors (riido_pg.fields): 1 for a kind the question is about
            test_prior := CASE WHEN string_to_array(ident_text, ' ') && cfg.test_words
                               THEN 1::float8 ELSE cfg.structure_test_prior END;
            example_prior := CASE WHEN string_to_array(ident_text, ' ') && cfg.example_words
                                  THEN 1::float8 ELSE cfg.structure_example_prior END;
        END IF;
        SELECT coalesce(array_agg(f.doc_ord ORDER BY f.o), '{}'),
               coalesce(array_agg(f.score ORDER BY f.o), '{}'),
               coalesce(array_agg(f.raw ORDER BY f.o), '{}'),
               coalesce(array_agg(f.ident ORDER BY f.o), '{}'),
               coalesce(array_agg(f.name ORDER BY f.o), '{}'),
               coalesce(array_agg(f.doc_id ORDER BY f.o), '{}')
        INTO out_ords, out_scores, f_raw, f_ident, n_units, f_ids
        FROM riido.search_fusion(
                 segs, snap.removed, snap.document_count, snap.len_raw, snap.k1, snap.b,
                 raw_lex, snap.len_ident, ident_lex, n_k::integer, chosen,
                 CASE chosen WHEN 'identifier_bm25_fused' THEN cfg.fused_weight
                             WHEN 'identifier_bm25_rrf' THEN cfg.rrf_k
                             ELSE cfg.structure_w_ident END,
                 cfg.structure_w_name, test_prior, example_prior, cfg.structure_name_match,
                 snap.text_config::regconfig, cfg.structure_length_prior, snap.recent,
                 cfg.structure_recent_prior, snap.snapshot_id, cfg.structure_history_prior,
                 cfg.history_k1, cfg.history_b, cfg.structure_change_prior, cfg.change_tau)
             WITH ORDINALITY AS f(doc_ord, score, raw, ident, name, doc_id, o);
    END IF;

    -- each result's id as its list or fusion read it (r_ids and i_ids: the lists' ids,
    -- NULL for the scores appended to them); looked up only for a hint no list held
    RETURN QUERY
    SELECT o.pos::integer,
           coalesce(o.doc_id, r.doc_id, i.doc_id,
                    (SELECT d.doc_id FROM riido.documents AS d
                     WHERE d.segment_id = (
                               SELECT g.segment_id FROM riido.segments AS g
                               WHERE g.segment_id = ANY(segs)
                                 AND o.doc_ord >= g.first_ord
                                 AND o.doc_ord < g.first_ord + g.documents)
                       AND d.doc_ord = o.doc_ord)),
           coalesce(r.units, o.raw, 0)::float8 / cfg.scale,
           CASE WHEN identifier
                THEN coalesce(i.units, o.ident, 0)::float8 / cfg.scale END,
           label,
           CASE WHEN out_scores IS NOT NULL THEN coalesce(o.score, 0::float8) END,
           CASE WHEN chosen = 'structure_bm25'
                THEN coalesce(o.name, 0)::float8 / cfg.scale END,
           snap.document_count,
           has_words
    -- a fusion's units come in its rows' order (f_raw, f_ident), a list's by doc_ord
    FROM unnest(coalesce(out_ords, '{}'), out_scores, n_units, f_raw, f_ident, f_ids)
         WITH ORDINALITY AS o(doc_ord, score, name, raw, ident, doc_id, pos)
    LEFT JOIN unnest(r_ords, r_units, r_ids) AS r(doc_ord, units, doc_id)
      ON r.doc_ord = o.doc_ord
    LEFT JOIN unnest(i_ords, i_units, i_ids) AS i(doc_ord, units, doc_id)
      ON i.doc_ord = o.doc_ord
    ORDER BY o.pos;
END
$$;

-- The contract's entry point (README "Search from SQL").
CREATE OR REPLACE FUNCTION riido.search(
    snapshot text, query text, k integer DEFAULT 10, policy text DEFAULT 'bm25',
    hints text[] DEFAULT NULL
) RETURNS TABLE (
    rank integer, id text, bm25_score double precision,
    identifier_bm25_score double precision, policy text, score double precision
)
LANGUAGE sql STABLE AS $$
SELECT s.rank, s.id, s.bm25_score, s.identifier_bm25_score, s.policy, s.score
FROM riido.search_ranked($1, $2, $3, $4, $5) AS s
$$;
