"""Memory: critiques stored as YAML, and the lessons later runs draw from them.

Modules, one job each:

* ``schema``    the critique record, its JSON Schema (``critique.schema.json``), validation
  (``fastschema``: the compiled fast path of that validation)
* ``safeyaml``  size-capped, depth-checked, symlink-refusing, alias- and tag-rejecting YAML
  reading; readable writing
* ``evidence``  the report a run record names
* ``store``     critique files: listing by file-name time, loading with reasons, atomic writes,
  retention (junk and future-dated files go first), ``critique.log``
* ``facts``     what the program knows exactly about a run, from its typed run record
  (:mod:`research_agent.record`) and its report; ``measured`` builds the critique's
  ``facts:`` block (typed in :mod:`research_agent.measures`), ``site_names`` names each source's site (host or
  corpus folder), ``citation_support`` is the weak-support rule for citations
* ``critique``  ``critique_run``: those facts plus one model judgement
* ``lessons``   ``select_lessons``: eligible critiques, control runs, suspension, collapse, retirement;
  lessons are built by ``lesson_planning`` (decompose) and ``lesson_judging`` (relevance) from
  the critiques' facts, written by ``lesson_text``, settled by ``lesson_settle``, shown by
  ``lesson_render``; ``targets`` says what each lesson should move
* ``effects``   each lesson key's target with and without it, a 90% interval, trial/active/retired
* ``index``     the summary index of the critique files (``meta/index.sqlite``), rebuilt from the
  YAML as files change (``index_db`` opens it safely, ``index_rows`` summarises a file)
* ``stats``     trends, z-scored baseline-versus-adaptive comparison, plots
* ``ab``        the learning A/B: each question run without and with lessons, both critiqued
  (``ab_questions``: the questions file; ``ab_types``: the frozen results; ``ab_measure``:
  the paired differences); saved as ``ab-<stamp>.yaml``, which no critique scan reads
* ``schedule``  when a run's critique happens: ``critique_now``, and ``after_report`` (skip,
  wait, or detach as the settings say)
* ``spawn``     ``spawn_critique``: start the detached critique process
* ``worker``    the detached process's entry point (``python -m research_agent.memory.worker``)
"""
