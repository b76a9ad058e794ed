"""The critique files and the vocabulary every floor above shares.

* ``schema``         the critique's JSON Schema (``critique.schema.json``; older versions as
  ``critique-<n>.schema.json``), its vocabulary, precise validation messages
  (``fastschema``: the compiled fast path of that validation)
* ``critique_types`` the critique as the program holds it: frozen dataclasses
* ``names``          the strict patterns a site or folder name must match, corpus ids and the
  site of a local file (``<corpus id>/<first folder>``)
* ``targets``        what each lesson should move, read off one critique
* ``files``          critique files on disk: listing, safe loading with reasons, atomic writes,
  retention, ``critique.log``;  ``failures``  critiques that failed, one small record per run
* :mod:`.index`      the summary index ``meta/index.sqlite``, rebuilt from the YAML as files change
* :mod:`.person`     the lessons a person wrote or approved (``lessons.yaml``, trusted by its hash)
  and the critic's proposals, quarantined until a person decides
"""
