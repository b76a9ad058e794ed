"""Memory: critiques stored as YAML, and the lessons later runs draw from them.

Four floors, grouped by job; each imports only the floors below it
(``tests/test_shape.py`` holds them to that):

* :mod:`.lessons`   what a run is given: lessons built from eligible critiques, settled,
  selected, rendered into prompts and the report, offered before the domain is known
* :mod:`.effects`   whether lessons help: each lesson's effect from its own trial, with an
  always-valid interval, trends, suspension and collapse checks, and the learning A/B (``memory ab``)
* :mod:`.critique`  critiquing one finished run: exact facts from its record and report, one
  model judgement, and when that happens (now, waited for, or in a detached worker)
* :mod:`.store`     the files and their shared vocabulary: the critique schema and types,
  lesson targets, safe loading and atomic writing, retention, the summary index
"""
