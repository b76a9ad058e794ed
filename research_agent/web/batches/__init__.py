"""The batch pages: many questions run as ``research-agent batch`` runs them, started, followed,
cancelled and resumed from the browser.

* :mod:`.pages`    ``/batches`` (the list and the form: pasted questions or an uploaded file),
                   ``/batches/<id>`` (its page, its events), Cancel and Resume
* :mod:`.board`    the batch sessions this server runs, each holding run slots and the batch's
                   lock, and the events a page follows
* :mod:`.listing`  the batches of the reports folder as the list shows them, read again only
                   when a state file changed
"""
