"""The run record: what one run did, typed and frozen, stored as ``reports/meta/run-<id>.yaml``.

The run's finish step builds one :class:`RunRecord`; :func:`write_run_record` writes it
with its report (both or neither) and :func:`read_run_record` reads it back into the
same types, checked against ``record.schema.json``. Memory reads runs only this way.

* ``types``  the frozen record; the counts and what each one means
* ``parts``  its light parts (a source, an iteration, a corpus indexed...), which a run keeps from its start
* ``lessons`` its ``lessons:`` block (given, withheld and why, the trial seed and probabilities)
* ``io``     the write/read pair, the schema, and reading records of ``schema_version`` 1
* ``passages`` per cited source, the text its writer was given (``passages-<id>.json``),
  and a citation's passage in it
"""

from typing import TYPE_CHECKING

from ..lazy import lazy_names

if TYPE_CHECKING:  # what the type checker sees of the lazy names below
    from .io import MAX_RUN_RECORD_BYTES, read_run_record, record_yaml, run_record_schema, write_run_record
    from .lessons import AppliedLesson, LessonsRecord, WithheldLesson
    from .parts import RUN_RECORD_VERSION, CorpusRecord, FetchFailure, Iteration, SourceSummary, SubQueryCount
    from .passages import PassageStore, StoredSource, build_passage_store, read_passage_store
    from .types import RunRecord

# Imported on first use: a run reads ``lessons`` and ``parts`` on the way to its first model call, which
# must not wait for ``types`` and ``io`` (the schema, yaml, the skeptic's and the claim check's types).
_LAZY = {
    **dict.fromkeys(("MAX_RUN_RECORD_BYTES", "read_run_record", "record_yaml", "run_record_schema",
                     "write_run_record"), "io"),
    **dict.fromkeys(("PassageStore", "StoredSource", "build_passage_store", "read_passage_store"), "passages"),
    **dict.fromkeys(("RUN_RECORD_VERSION", "CorpusRecord", "FetchFailure", "Iteration", "SourceSummary",
                     "SubQueryCount"), "parts"),
    **dict.fromkeys(("AppliedLesson", "LessonsRecord", "WithheldLesson"), "lessons"),
    **dict.fromkeys(("RunRecord",), "types"),
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
