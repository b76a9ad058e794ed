"""Quality against ground truth (``research-agent eval``): worlds with known answers, graded by program.

* :mod:`.world`      the world format (pages + ``questions.yaml``) and the built-in fictional world
* :mod:`.grading`    the grader: a pure function of world, report and run record (found, cited,
  stale, unsupported, declined)
* :mod:`.plan`       an eval as a batch of its own kind (``reports/meta/eval-<id>.yaml``): each
  question of each round an entry, the holdout split
* :mod:`.session`    the rounds run on the batch's machinery, each finished run graded
* :mod:`.graded`     a finished run read back from the reports folder and graded
* :mod:`.ledger`     each graded run's grade recorded in its row of the trial ledger (what
  ``memory effects`` reads to judge lessons and the critic by ground truth)
* :mod:`.scorecard`  the scorecard as data (summary, kinds, rounds, the critic's tracking, runs)
* :mod:`.trust`      what the numbers allow one to say: paired changes in words, the critic's rank
  correlation with ground truth (kept with the memory's effects, which say it too)
* :mod:`.pages`      ``reports/eval-<id>.md``, ``.html`` and ``.json``
* :mod:`.compare`    two evals of one world paired question by question

It never copies the batch: its runs go through :mod:`research_agent.batch` (the shared endpoint,
the runner, the state file), and the critiques of a ``--holdout`` measured half are marked so that
:mod:`research_agent.memory.lessons.build.pool` leaves them out of every lesson.
"""
