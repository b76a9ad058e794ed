"""What a run is given: lessons from the critiques of earlier runs in its domain.

* ``types``     a lesson and a run's selection: frozen results shared by the modules below
* ``evidence``  the evidence behind one lesson before it is written
* ``pool``      the critiques each lesson is counted over: the newest whose run was not given it
* ``planning``  decompose lessons, built from facts and applicable scores
* ``judging``   relevance lessons (site track records), built from facts
* ``text``      the templates a lesson's text is written from, validated slots only
* ``settle``    one lesson per key, no contradictions, a few per stage
* ``setting``   where a run searches: which lessons can move there, which site names it may hear
* ``trials``    each selected lesson withheld on its own at random (the seam any lesson joins)
* ``select``    ``select_lessons``: eligible critiques, control runs, suspension, retirement, trials
* ``effects_view`` each lesson's effect with its current text (``memory effects``, MCP)
* ``render``    the prompt block per stage and the report's "Lessons Applied"
* ``offer``     the planning lessons offered before the question's domain is known
* ``run``       what memory gives one run (offer, then the named domain's selection)
"""
