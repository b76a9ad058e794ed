"""The reports pages: read a report beside its run record, download it, delete it.

* :mod:`.pages`  ``/reports`` (the list, with a filter), ``/reports/<id>`` (the page), its downloads
                 (``.md``, ``.html``, ``.pdf``, each an attachment) and its deletion (confirmed first)
* :mod:`.views`  the list's rows and a run record's parts, read from the reports folder
* :mod:`.page`   a report's page: the export's HTML with the workbench's bar and the run's details
"""
