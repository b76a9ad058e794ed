"""What a run is given: lessons from the critiques of earlier runs in its domain.

* ``types``     a lesson and a run's selection: frozen results shared by the modules below
* :mod:`.build` lessons built from eligible critiques (planning, judging), written from
  templates and settled: one per key, no contradictions, a few per stage
* ``setting``   where a run searches: which lessons can move there, which site names it may hear
* ``person``    a person's lessons as a run is given them, only while ``lessons.yaml`` is trusted
* ``trials``    each selected lesson withheld on its own at random (the seam any lesson joins)
* ``choose``    what one run is given once its lessons are built and measured (pure: the learning
  simulation in ``bench/`` runs it too): ranking, control runs, suspension, trials
* ``select``    ``select_lessons``: reads the index (eligible critiques, effects, suspension) for ``choose``
* ``effects_view`` each lesson's effect with its current text (``memory effects``, MCP)
* ``render``    the prompt block per stage, the report's "Lessons Applied" and the progress line
* ``offer``     the planning lessons offered before the question's domain is known
* ``run``       what memory gives one run (offer, then the named domain's selection)
"""
