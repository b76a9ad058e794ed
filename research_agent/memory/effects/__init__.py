"""Whether lessons help, measured.

* ``intervals``      differences of means with a 90% interval (paired or Welch)
* ``lesson_effects`` each lesson key's target with and without it; active, retired
* ``stats``          score trends, baseline-versus-adaptive suspension, mode-collapse checks, plots
* ``ab``             the learning A/B: each question run without and with lessons, both critiqued
  (``ab_questions`` reads the questions file, ``ab_types`` holds the frozen results,
  ``ab_measure`` the paired differences)
"""
