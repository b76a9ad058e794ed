"""Extraction in worker processes: trafilatura holds the GIL, so pages are extracted in parallel here.

* ``pool``            :class:`~.pool.ExtractionPool`: one picklable function in as many workers
  as there are CPUs, in order, with bounded memory; bad input costs only its own job
* ``workers``         the worker processes behind the pool, driven by one dispatcher thread
* ``worker_process``  what runs inside one worker; it imports only what extraction needs
* ``overlap``         for async callers (the fetcher): in this process while pages come one at a
  time, in the pool once they overlap

Nothing is imported here: a worker imports only the modules it runs.
"""
