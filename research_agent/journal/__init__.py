"""The run journal: every run's entry from its start, and its checkpoints, under ``reports/meta/``.

* :mod:`.entries`            ``journal-<id>.json``, one a run, written atomically; a run whose process
                             died (its lock free, its entry still ``running``) reads ``interrupted``
* :mod:`.run_journal`        one run's journal from start to end (:func:`~.run_journal.journaled`), and
                             what a caller says of it (:class:`~.run_journal.Journalling`: front end, resume)
* :mod:`.checkpoints`        every model answer and search a run got, keyed by what it holds and the
                             question that got it, so that ``run --resume`` asks nothing twice
* :mod:`.settings_snapshot`  a run's settings as its entry keeps them (no secret), and again on resume
* :mod:`.listing`            the journal as the front ends show it (``runs``, the workbench, MCP)

The memory's index may mirror the journal; the files here are the only record it needs.
"""
