-- rank_score.sql: the ranking of a snapshot, or its first %(limit)s, by a policy's
-- own score (identifier_bm25_fused, identifier_bm25_rrf, structure_bm25, any policy
-- module's riido_pg.ranking.policy.skeleton.Scored): composed by
-- riido_pg.ranking.bm25.score_ranking from the policy's one score fragment.
--
-- {scored} is sql/scored.sql for each column the policy reads (c: raw, ident, name),
-- so bm25_score, identifier_bm25_score and name_bm25_score are exactly those of their
-- own rankings; for a policy reading ranks it is followed by each column's matches
-- numbered in ranking order (ranked_<c>: score descending, id ascending, as rank.sql
-- orders them; a match's id is read only when another match of its column has its
-- score, and none in a path of one segment, whose ords are in id byte order).
-- {ctes} are the policy's own CTEs (structure_bm25: each document's prior).
-- fused full-joins the columns on doc_ord (column c's row aliased c_<c>: {joined}),
-- left-joins the policy's CTEs ({joins}), and computes {score}, the policy's one
-- float8 expression (its parameters bound as p_<name>), in the order the
-- evaluation computes it too.
-- A score in two steps (structure_bm25's name match) gives {final}, the score over
-- fused's row f, reading its own CTEs {post} (after fused: they may read every
-- document's first-step score), those of {post_joins} left-joined on f.doc_ord;
-- otherwise {final} is f.score.
-- {tail} is sql/rank_tail.sql on the documents scoring above 0; the others (matched
-- by nothing, or scoring 0 under a weight of 0) follow with score 0 in id order, with
-- their column scores.
-- Parameters: those of scored.sql for each column, the policy's own (p_<name>), and
-- rank_tail.sql's.
-- Returns: (doc_ord, doc_id, score, each column's units).
WITH {removed}{scored},
{ctes}fused AS MATERIALIZED (
    SELECT {doc_ord} AS doc_ord{units},
           {score} AS score
    FROM {joined}{joins}
),
{post}matched AS (
    SELECT m.* FROM (
        SELECT f.doc_ord, {final} AS score{columns}
        FROM fused AS f{post_joins}
    ) AS m
    WHERE m.score > 0
),
{tail}
