"""The grader: a pure function of (world, report, run record); nothing here asks a model.

* :mod:`.grade`     found, cited, stale, unsupported and declined for one report
* :mod:`.mentions`  answers as a reader compares them; the names and numbers a sentence states
"""

from .grade import CheckpointGrade, Grade, Unsupported, grade

__all__ = ["CheckpointGrade", "Grade", "Unsupported", "grade"]
