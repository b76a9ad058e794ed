"""Lessons and the critic judged by ground truth: what evals' grades in the trial ledger show.

* ``tracking``  how far the critic's scores track a ground-truth measure: Spearman's rank
  correlation with its interval, and a verdict in words (the eval's scorecard says it too)
* ``recall``    each lesson's effect on fact recall over its own trial arms, beside its effect on
  the critic's score, and the critic's tracking per domain, for ``memory effects``

Ground truth is shown, never decided on: a lesson's decision stays on the scores every run has,
since most runs are not evals.
"""
