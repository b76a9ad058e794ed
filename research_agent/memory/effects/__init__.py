"""Whether lessons help, measured.

* ``intervals``      differences of means with a 90% interval (paired or Welch)
* ``lesson_effects`` each lesson key's target in the runs given it and the runs eligible and
  withheld (its own trial or a whole-run control): paired or Welch, ``confounded_with``,
  measuring / active / no-effect / retired
* ``stats``          score trends, baseline-versus-adaptive suspension, mode-collapse checks, plots
* ``ab``             the learning A/B: each question run without and with lessons, both critiqued
  (``ab_questions`` reads the questions file, ``ab_types`` holds the frozen results,
  ``ab_measure`` the paired differences)
"""
