"""Ranking policies, one module each (docs/how-it-works.md "How to add a policy").

:mod:`~riido_pg.ranking.policy.skeleton` is what they share: parameters declared as
data (:class:`~riido_pg.ranking.policy.skeleton.Param`), the combiner protocol the
evaluation depends on, and the one ranking statement a scored policy gives its score
fragment to. Each family's module declares its policies (``POLICIES``):
:mod:`~riido_pg.ranking.policy.single`, :mod:`~riido_pg.ranking.policy.interleaved`,
:mod:`~riido_pg.ranking.policy.fused`, :mod:`~riido_pg.ranking.policy.rrf`,
:mod:`~riido_pg.ranking.policy.structure`, :mod:`~riido_pg.ranking.policy.hinted`,
:mod:`~riido_pg.ranking.policy.model_weighted`;
the registry (:mod:`riido_pg.ranking.policies`) registers them in that order.
"""
