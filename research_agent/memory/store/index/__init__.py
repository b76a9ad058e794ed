"""The summary index of the critique files, ``reports/meta/index.sqlite``: a cache, never an authority.

* ``summary``  the index as callers use it: :class:`~.summary.CritiqueIndex`, ``open_index``,
  ``list_critiques``, how far it is trusted and how long it may take
* ``store``    its rows kept true to the critique files, refreshed, written signed and checked
* ``rows``     what it keeps of one critique file (evidence without free text, lessons given or
  withheld and why), made only by the real loader
* ``listing``  the critique files it summarises;  ``parse``  reading the new ones, in worker
  processes when many appear at once (``python -m research_agent.memory.store.index.parse``)
* ``db``       opening the SQLite file safely;  ``sign``  each row's MAC;  ``seal``  an index
  already checked, remembered in the user state folder
"""
