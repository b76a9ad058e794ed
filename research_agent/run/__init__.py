"""The parts of one run that :mod:`research_agent.pipeline` tells the story of, in story order.

* :mod:`.assembly`     the run built before its story starts (model, providers, deadline, what it owns)
  and taken down after; :mod:`.indexing` the local corpus indexed while the first model call runs;
  :mod:`.context` ``research_context.md`` read as data
* :mod:`.ledger`       what a run accumulates as it goes: sources, sub-queries, iterations, warnings, the latest draft
* :mod:`.writing`      write and review: draft, skeptic, review, revise
* :mod:`.meanwhile`    work made while the model is asked: the draft linted while the skeptic reads it, the
                       sources read for the claim check while the writer writes
* :mod:`.replan`       whether another plan could help (only when new sources could), and what it is told
* :mod:`.first_draft`  the first plan's draft, written while relevance scores the same sources
* :mod:`.claims`       the claim check: in a run (planned from the draft, answered in the skeptic's round),
                       and ``review --check-claims`` on a finished report, from what its run stored
* :mod:`.report`       a draft rendered to markdown: the drafts the review reads, the final and the short report
* :mod:`.finish`       the final report, the run record and passage store, written all or none

The shared vocabulary these use (:mod:`research_agent.sources`, :mod:`research_agent.progress`) stays at
the root: fetch, search, stages, memory and the front ends import it too, so it cannot live here
without an import cycle. Importing this package loads none of its modules.
"""
