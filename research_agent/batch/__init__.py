"""Many questions in one command (``research-agent batch FILE``, the MCP ``research_batch`` tool),
bounded by the endpoint's limits, resumable, learning as it goes.

* :mod:`.questions`  the questions file (text, CSV, JSONL), refused whole before any model call
* :mod:`.plan`       each question's settings and entry; an unfinished batch of the same questions continued
* :mod:`.state`      ``reports/meta/batch-<id>.yaml``: every question pending, running, done or failed
* :mod:`.limits`     what the runs share on the endpoint: rpm/tpm token buckets, one backoff for a 429
* :mod:`.runner`     at most ``parallel`` questions at once, each researched then critiqued, retried or failed
* :mod:`.session`    one session as every front end runs it: the shared client and reader, then the page
* :mod:`.summary`    the batch page ``reports/batch-<id>.md`` (and ``.html``), and its JSON
"""
