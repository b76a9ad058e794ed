"""Critiquing one finished run.

* ``facts``            what the program knows exactly about a run, from its typed record and
  its report; ``measured`` builds the critique's ``facts:`` block from them,
  ``site_names`` names each source's site, ``citation_support`` is the weak-support rule
* ``evidence``         the report a run record names, read without trusting the record
* ``judgement``        ``critique_run``: those facts plus one model judgement, one YAML file
* ``schedule``         when a run's critique happens: now, waited for, or detached
* ``spawn``/``worker`` the detached critique process and its entry point
  (``python -m research_agent.memory.critique.worker``)
"""
