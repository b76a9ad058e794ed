"""Review: deterministic lint plus the skeptic's findings, as one list of issues.

* ``review``       the review of a draft: lint issues plus the skeptic's findings, and the verdict
* ``issues``       the issue object every critic of a draft produces
* ``lint``         the deterministic lint of a markdown report, parsed once and run through every check
* :mod:`.checks`   the lint's checks, one family per module
* ``markdown``     the markdown parse the lint reads: front matter, headings, prose blocks, Sources
* ``rules``        custom lint rules, loaded from the YAML file the user writes
* ``feedback``     the review as text: what the writer gets on revision and what ``-v`` shows
* ``report_file``  reviewing a finished report on its own (``review``, the MCP ``review_report`` tool)
"""
