-- topk_prototype.sql: exact top-K BM25 with dynamic pruning (issue 9), a prototype.
--
-- Everything lives in schema topk and is built FROM riido.postings, so nothing
-- shipped changes. Read by bench/topk_prototype.py, which substitutes
-- the rank_sql placeholder (sql/rank.sql with $1..$5 for its parameters: the exhaustive
-- fallback) before running it. Plain SQL and PL/pgSQL, PostgreSQL >= 15.
--
-- Layout: each lexeme's postings sorted by impact (idf * tfn, the very float8
-- product rank.sql sums) descending, ties by doc_ord, cut into chunks of
-- geometrically growing size: chunk c holds impact ranks
-- [128 * (2^c - 1), 128 * (2^(c+1) - 1)), i.e. 128, 256, 512, ... postings.
-- A lexeme of df postings has ceil(log2(df / 128 + 1)) chunks (at most 13 at 1M).
-- Each chunk row carries max_impact (its first impact) and n, so the chunk
-- directory of a query (a few dozen rows) is read without detoasting any array.

DROP SCHEMA IF EXISTS topk CASCADE;
CREATE SCHEMA topk;

CREATE TABLE topk.chunks (
    snapshot_id text COLLATE "C" NOT NULL,
    col         text NOT NULL,
    lexeme      text COLLATE "C" NOT NULL,
    chunk       int NOT NULL,          -- 0 = the highest impacts
    max_impact  float8 NOT NULL,       -- = impacts[1]: no posting of a later chunk exceeds it
    n           int NOT NULL,          -- cardinality(doc_ords)
    doc_ords    int[] NOT NULL,        -- impact descending, then doc_ord ascending
    impacts     float8[] NOT NULL,     -- idf * tfn, bit-identical to rank.sql's products
    PRIMARY KEY (snapshot_id, col, lexeme, chunk)
);
ALTER TABLE topk.chunks ALTER COLUMN doc_ords SET STORAGE EXTERNAL;
ALTER TABLE topk.chunks ALTER COLUMN impacts SET STORAGE EXTERNAL;

-- @@BUILD@@ (run once per snapshot; %(snapshot_id)s; timed separately)
-- One small sort per lexeme (a LATERAL over its arrays), never a global sort of
-- all postings.
-- @@BUILD_BEGIN@@
INSERT INTO topk.chunks (snapshot_id, col, lexeme, chunk, max_impact, n, doc_ords, impacts)
SELECT p.snapshot_id, p.col, p.lexeme, c.chunk, c.max_impact, c.n, c.doc_ords, c.impacts
FROM riido.postings AS p
CROSS JOIN LATERAL (
    SELECT s.chunk,
           max(s.impact) AS max_impact,
           count(*)::int AS n,
           array_agg(s.doc_ord ORDER BY s.r) AS doc_ords,
           array_agg(s.impact ORDER BY s.r) AS impacts
    FROM (
        SELECT r.doc_ord, r.impact, r.r,
               -- floor(log2(r / 128 + 1)) with integer arithmetic
               length(ltrim(((r.r / 128 + 1)::bit(32))::text, '0')) - 1 AS chunk
        FROM (
            SELECT u.doc_ord, p.idf * u.tfn AS impact,
                   row_number() OVER (ORDER BY p.idf * u.tfn DESC, u.doc_ord) - 1 AS r
            FROM unnest(p.doc_ords, p.tfn) AS u(doc_ord, tfn)
        ) AS r
    ) AS s
    GROUP BY s.chunk
) AS c
WHERE p.snapshot_id = %(snapshot_id)s;
-- @@BUILD_END@@

-- Exact scores of given documents by random access to their tsvectors: tfn is
-- recomputed with finalize_column.sql's expression, operand for operand (same
-- k1, b, avgdl, len), so it is the same float8; idf comes from riido.postings;
-- products are summed in lexeme byte order as in rank.sql and scores.sql.
-- Unmatched documents score 0.
CREATE FUNCTION topk.scores(p_snapshot text, p_col text, p_lexemes text[], p_docs int[])
RETURNS TABLE (doc_ord int, score float8)
LANGUAGE plpgsql STABLE AS $fn$
DECLARE
    k1 float8; b float8; avgdl float8; lex text[]; idfs float8[];
BEGIN
    SELECT s.k1, s.b INTO k1, b FROM riido.snapshots AS s WHERE s.snapshot_id = p_snapshot;
    SELECT c.avgdl INTO avgdl FROM riido.column_stats AS c
    WHERE c.snapshot_id = p_snapshot AND c.col = p_col;
    SELECT array_agg(p.lexeme::text), array_agg(p.idf) INTO lex, idfs
    FROM riido.postings AS p
    WHERE p.snapshot_id = p_snapshot AND p.col = p_col AND p.lexeme = ANY(p_lexemes);
    RETURN QUERY EXECUTE format($q$
        SELECT o.doc_ord, coalesce(s.score, 0)::float8
        FROM unnest($4::int[]) AS o(doc_ord)
        LEFT JOIN (
            SELECT d.doc_ord,
                   sum($8[array_position($3, u.lexeme)] * (
                       cardinality(u.positions)::float8
                       / (cardinality(u.positions) + $5 * (1 - $6 + $6 * d.%1$I / $7))
                   ) ORDER BY u.lexeme COLLATE "C") AS score
            FROM riido.documents AS d
            CROSS JOIN LATERAL unnest(d.%2$I) AS u
            WHERE d.snapshot_id = $1 AND d.doc_ord = ANY($4::int[]) AND u.lexeme = ANY($3)
            GROUP BY d.doc_ord
        ) AS s ON s.doc_ord = o.doc_ord
    $q$, CASE p_col WHEN 'raw' THEN 'len_raw' ELSE 'len_ident' END,
         CASE p_col WHEN 'raw' THEN 'tsv_raw' ELSE 'tsv_ident' END)
    USING p_snapshot, p_col, lex, p_docs, k1, b, avgdl, idfs;
END
$fn$;

-- The first p_k rows of rank.sql's full ranking: (doc_ord, doc_id, score).
--
-- 1. chunk directory of the query lexemes (max_impact and n of every chunk: a
--    few dozen small rows). sum(df) <= p_exhaustive_df: run rank.sql itself.
-- 2. probe pass: read the cheapest-looking chunks (greedy, below) up to
--    max(p_first_budget, sum(df) / 32) postings, sum impacts per document (hash
--    aggregate); theta = the p_k-th best partial sum * (1 - 1e-9). A partial sum
--    is a lower bound of a real score, so the true p_k-th score is >= theta.
--    Fewer than p_k documents seen: rank.sql (this is also where queries with
--    fewer than p_k matching documents end, so the zero-score fill is rank.sql's).
-- 3. cutoffs: read chunks 0 .. cut_t - 1 of each lexeme t; tail_t = max_impact
--    of chunk cut_t (0 when none is left). Greedily deepen the (lexeme, depth)
--    with the largest drop of tail per posting read (looking past plateaus of
--    equal impacts) until sum(tail_t) < theta * (1 - 1e-9). A
--    document in no read chunk scores at most sum(tail_t) < theta: not in the top
--    p_k.
--    If that reads more than p_prune_fraction of sum(df): rank.sql (pruning
--    does not pay; a pass costs about what rank.sql's sort costs per posting).
-- 4. pass: per document partial and bound = sum(tail) + sum over its read
--    postings of (impact - tail_t) (= partial + the tails of the lexemes it was
--    not seen in); theta rises to the p_k-th best partial; survivors are the
--    documents with bound >= theta * (1 - 1e-9) (slack for float rounding between
--    a bound summed in any order and the lexeme-order sum). More than
--    p_max_survivors: halve sum(tail) (back to 3.) and pass again.
-- 5. exact scores of the survivors by random access to their tsvectors
--    (topk.scores: the same float8 products, summed in lexeme order), ordered by
--    score desc, doc_ord; the first p_k, named.
CREATE FUNCTION topk.rank(p_snapshot text, p_col text, p_lexemes text[], p_n int, p_k int,
                          p_exhaustive_df bigint DEFAULT 20000,
                          p_prune_fraction float8 DEFAULT 0.3,
                          p_max_survivors int DEFAULT 1000,
                          p_first_budget bigint DEFAULT 4096)
RETURNS TABLE (doc_ord int, doc_id text, score float8)
LANGUAGE plpgsql STABLE AS $fn$
DECLARE
    terms text[];          -- distinct lexemes that have postings (lexeme order)
    maxes float8[];        -- maxes[t][c+1] = max_impact of chunk c of term t (padded 0)
    ns int[];              -- ns[t][c+1] = n of chunk c
    nchunks int[];
    sum_df bigint;
    theta float8 := 0;
    kth float8;
    cut int[];
    tails float8[];
    tail_sum float8;
    target float8;
    budget bigint;
    best_i int; best_j int; best_gain float8; gain float8; nxt float8; cost bigint;
    cands int[];
    seeds int[];
    i int;
    width int;
    nread bigint;
    passes int := 0;
    read_total bigint := 0;
    outcome text := 'pruned';
    complete boolean;
    pass_sql CONSTANT text := $q$
        WITH agg AS MATERIALIZED (
            SELECT u.doc_ord, sum(u.imp) AS part, sum(u.imp - t.tail) AS gain
            FROM unnest($3::text[], $4::int[], $5::float8[]) AS t(lexeme, cut, tail)
            JOIN topk.chunks AS c
              ON c.snapshot_id = $1 AND c.col = $2 AND c.lexeme = t.lexeme
             AND c.chunk < t.cut
            CROSS JOIN LATERAL unnest(c.doc_ords, c.impacts) AS u(doc_ord, imp)
            GROUP BY u.doc_ord
        ),
        th AS (
            SELECT greatest($7, coalesce((SELECT part FROM agg ORDER BY part DESC
                                          OFFSET $8 - 1 LIMIT 1), 0) * (1 - 1e-9)) AS v
        )
        SELECT (SELECT v FROM th),
               (SELECT array_agg(doc_ord) FROM agg
                WHERE $6 < (SELECT v FROM th) * (1 - 1e-9)         -- a complete pass
                  AND $6 + gain >= (SELECT v FROM th) * (1 - 1e-9))
    $q$;
BEGIN
    EXECUTE $q$
        SELECT array_agg(lexeme ORDER BY lexeme), array_agg(nc ORDER BY lexeme),
               sum(df)::bigint, max(nc)
        FROM (SELECT c.lexeme, count(*)::int AS nc, sum(c.n) AS df
              FROM topk.chunks AS c
              WHERE c.snapshot_id = $1 AND c.col = $2 AND c.lexeme = ANY($3::text[])
              GROUP BY c.lexeme) AS t
    $q$ INTO terms, nchunks, sum_df, width USING p_snapshot, p_col, p_lexemes;

    IF terms IS NOT NULL AND sum_df > p_exhaustive_df THEN
        EXECUTE $q$
            SELECT array_agg(m ORDER BY o), array_agg(nn ORDER BY o)
            FROM (
                SELECT t.o,
                       array_agg(coalesce(c.max_impact, 0) ORDER BY g) AS m,
                       array_agg(coalesce(c.n, 0) ORDER BY g) AS nn
                FROM unnest($3::text[]) WITH ORDINALITY AS t(lexeme, o)
                CROSS JOIN generate_series(0, $4 - 1) AS g
                LEFT JOIN topk.chunks AS c
                  ON c.snapshot_id = $1 AND c.col = $2 AND c.lexeme = t.lexeme AND c.chunk = g
                GROUP BY t.o
            ) AS x
        $q$ INTO maxes, ns USING p_snapshot, p_col, terms, width;

        cut := array_fill(1, ARRAY[cardinality(terms)]);
        tails := array_fill(0::float8, ARRAY[cardinality(terms)]);
        target := 0;                                -- the probe: budget-bound only
        budget := greatest(p_first_budget, sum_df / 32);
        LOOP
            -- greedy cutoffs: deepen until sum(tail) < target (or the budget)
            LOOP
                tail_sum := 0;
                nread := 0;
                FOR i IN 1 .. cardinality(terms) LOOP
                    tails[i] := CASE WHEN cut[i] < nchunks[i] THEN maxes[i][cut[i] + 1] ELSE 0 END;
                    tail_sum := tail_sum + tails[i];
                    FOR j IN 1 .. cut[i] LOOP nread := nread + ns[i][j]; END LOOP;
                END LOOP;
                EXIT WHEN tail_sum < target OR tail_sum = 0 OR nread >= budget;
                -- best drop of tail per posting over every (term, depth): looking past
                -- plateaus of equal impacts (duplicates), where one chunk drops nothing
                best_i := NULL; best_gain := -1;
                FOR i IN 1 .. cardinality(terms) LOOP
                    cost := 0;
                    FOR j IN cut[i] + 1 .. nchunks[i] LOOP
                        cost := cost + ns[i][j];
                        nxt := CASE WHEN j < nchunks[i] THEN maxes[i][j + 1] ELSE 0 END;
                        gain := (tails[i] - nxt) / cost;
                        IF gain > best_gain THEN
                            best_gain := gain; best_i := i; best_j := j;
                        END IF;
                    END LOOP;
                END LOOP;
                cut[best_i] := best_j;
            END LOOP;
            IF passes > 0 AND nread > p_prune_fraction * sum_df THEN
                outcome := 'fallback';
                EXIT;
            END IF;

            passes := passes + 1;
            read_total := read_total + nread;
            EXECUTE pass_sql INTO kth, cands
                USING p_snapshot, p_col, terms, cut, tails, tail_sum, theta, p_k;
            theta := kth;
            IF theta = 0 THEN outcome := 'few'; EXIT; END IF;
            IF passes = 1 THEN
                -- the probe's best partial sums, scored exactly: real scores, so
                -- their p_k-th is a lower bound too (and usually a much better one)
                EXECUTE $q$
                    SELECT array_agg(doc_ord) FROM (
                        SELECT u.doc_ord
                        FROM unnest($3::text[], $4::int[]) AS t(lexeme, cut)
                        JOIN topk.chunks AS c
                          ON c.snapshot_id = $1 AND c.col = $2 AND c.lexeme = t.lexeme
                         AND c.chunk < t.cut
                        CROSS JOIN LATERAL unnest(c.doc_ords, c.impacts) AS u(doc_ord, imp)
                        GROUP BY u.doc_ord
                        ORDER BY sum(u.imp) DESC, u.doc_ord
                        LIMIT $5
                    ) AS s
                $q$ INTO seeds USING p_snapshot, p_col, terms, cut, p_k;
                SELECT greatest(theta, x.score) INTO theta
                FROM topk.scores(p_snapshot, p_col, terms, seeds) AS x
                ORDER BY x.score DESC OFFSET p_k - 1 LIMIT 1;
            END IF;
            complete := tail_sum < theta * (1 - 1e-9);
            IF passes > 1 AND complete
               AND coalesce(cardinality(cands), 0) <= p_max_survivors THEN EXIT; END IF;
            target := CASE WHEN passes > 1 AND complete THEN tail_sum / 2
                           ELSE theta * (1 - 1e-9) END;
            budget := sum_df;
        END LOOP;
    ELSE
        outcome := 'small';
    END IF;

    IF current_setting('topk.debug', true) = 'on' THEN
        RAISE NOTICE 'topk %', json_build_object(
            'outcome', outcome, 'terms', cardinality(terms), 'sum_df', sum_df,
            'theta', theta, 'read', nread, 'read_total', read_total, 'passes', passes,
            'survivors', coalesce(cardinality(cands), 0));
    END IF;

    IF outcome <> 'pruned' THEN
        RETURN QUERY EXECUTE $rank$ {rank_sql} $rank$
            USING p_snapshot, p_col, p_lexemes, p_n, p_k;
        RETURN;
    END IF;

    -- 5. exact scores of the survivors, first p_k, named
    RETURN QUERY EXECUTE $q$
        SELECT s.doc_ord, d.doc_id::text, s.score
        FROM (
            SELECT x.doc_ord, x.score
            FROM topk.scores($1, $2, $3, $4) AS x
            ORDER BY x.score DESC, x.doc_ord
            LIMIT $5
        ) AS s
        JOIN riido.documents AS d ON d.snapshot_id = $1 AND d.doc_ord = s.doc_ord
        ORDER BY s.score DESC, s.doc_ord
    $q$ USING p_snapshot, p_col, terms, cands, p_k;
END
$fn$;
