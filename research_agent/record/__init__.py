"""The run record: what one run did, typed and frozen, stored as ``reports/meta/run-<id>.yaml``.

The run's finish step builds one :class:`RunRecord`; :func:`write_run_record` writes it
with its report (both or neither) and :func:`read_run_record` reads it back into the
same types, checked against ``record.schema.json``. Memory reads runs only this way.

* ``types``  the frozen record and its parts; the counts and what each one means
* ``lessons`` its ``lessons:`` block (given, withheld and why, the trial seed and probabilities)
* ``io``     the write/read pair, the schema, and reading records of ``schema_version`` 1
* ``passages`` per cited source, the text its writer was given (``passages-<id>.json``),
  and a citation's passage in it
"""

from typing import TYPE_CHECKING

from ..lazy import lazy_names

if TYPE_CHECKING:  # what the type checker sees of the lazy names below
    from .io import MAX_RUN_RECORD_BYTES, read_run_record, record_yaml, run_record_schema, write_run_record
    from .passages import PassageStore, StoredSource, build_passage_store, read_passage_store
    from .types import (
        RUN_RECORD_VERSION,
        AppliedLesson,
        CorpusRecord,
        FetchFailure,
        Iteration,
        LessonsRecord,
        RunRecord,
        SourceSummary,
        SubQueryCount,
        WithheldLesson,
    )

# Imported on first use: memory reads ``lessons`` and ``types`` on the way to a run's first model
# call, which must not wait for ``io`` (the schema, yaml, the skeptic's and the claim check's types).
_LAZY = {
    **dict.fromkeys(("MAX_RUN_RECORD_BYTES", "read_run_record", "record_yaml", "run_record_schema",
                     "write_run_record"), "io"),
    **dict.fromkeys(("PassageStore", "StoredSource", "build_passage_store", "read_passage_store"), "passages"),
    **dict.fromkeys(("RUN_RECORD_VERSION", "AppliedLesson", "CorpusRecord", "FetchFailure", "Iteration",
                     "LessonsRecord", "RunRecord", "SourceSummary", "SubQueryCount", "WithheldLesson"), "types"),
}  # fmt: skip

__all__ = [
    "RUN_RECORD_VERSION",
    "MAX_RUN_RECORD_BYTES",
    "RunRecord",
    "SourceSummary",
    "SubQueryCount",
    "Iteration",
    "AppliedLesson",
    "LessonsRecord",
    "WithheldLesson",
    "CorpusRecord",
    "FetchFailure",
    "write_run_record",
    "read_run_record",
    "record_yaml",
    "run_record_schema",
    "PassageStore",
    "StoredSource",
    "build_passage_store",
    "read_passage_store",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
