"""The setup as a person checks it, for every front end that shows it (``research-agent doctor``,
the workbench's settings page).

* :mod:`.checks`  doctor's checks: the endpoint and its models, the context window, the folders,
                  the search providers, the optional extras, each ``(what, ok, detail)``
* :mod:`.shown`   the settings as a page shows them (models, the endpoint's host, the context
                  window, providers, allowed folders, version), and any text cleared of every key
                  the settings hold: no secret is ever shown
"""
