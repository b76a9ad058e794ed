"""Whether lessons help, measured.

* ``lesson_effects`` each lesson key's target and the mean score in the runs given it and the runs
  that withheld it by its own trial draw (never whole-run controls): ``confounded_with``, and
  measuring / active / helpful / no-effect / retired
* ``estimate``       the difference those runs show: paired by question, per trial probability,
  adjusted for the other lessons given beside it
* ``sequential``     the always-valid interval around it: decisions that stay right however often
  they are looked at
* ``intervals``      differences of means with a 90% interval (paired or Welch), for the A/B
* ``stats``          score trends, adaptive-versus-baseline suspension (what the whole-run controls
  are for), mode-collapse checks, plots
* ``ab``             the learning A/B: each question run without and with lessons, both critiqued
  (``ab_questions`` reads the questions file, ``ab_types`` holds the frozen results,
  ``ab_measure`` the paired differences); ``measures`` what the critiques cost and the claims trend
* ``truth``          lessons and the critic judged by ground truth where evals graded runs: each
  lesson's effect on fact recall over its own arms, how far the critic tracks fact recall
"""
