"""Scripts that keep the repository's own files true to the code (not part of the package).

* :mod:`.config_reference`  writes ``docs/configuration.md`` from ``Settings`` and the command line
"""
