"""Quality against ground truth (``research-agent eval``): worlds with known answers, graded by program.

* :mod:`.world`    the world format (pages + ``questions.yaml``) and the built-in fictional world
* :mod:`.grading`  the grader: a pure function of world, report and run record (found, cited,
  stale, unsupported, declined)
"""
