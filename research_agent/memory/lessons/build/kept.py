"""Built lessons kept for their trial after retention removed the critiques that built them.

A lesson is built from the critiques retention keeps. Under a small ``max_critiques`` those can be
gone while the lesson's trial is undecided: a lesson that lowers the scores makes failing critiques,
which build nothing, so the lesson would stop being offered exactly when its trial needs runs
(the learning simulation showed a -1 lesson retired within 40 runs in 86% of histories under
``max_critiques 10`` against 96.5% with every critique kept). :func:`kept_for_trial` keeps such a
lesson offered, with the text the ledger recorded when a run was first given it
(:mod:`research_agent.memory.store.trials.texts`), while:

* the critiques kept no longer build it (a lesson they build is offered as built, as ever);
* it is not retired in its current trial (a retired lesson is never given again);
* its text is what its key's template writes (:func:`.text.written_from_template`);
* it fits the run's setting (no site lesson over the user's own documents);
* a run of its domain was given it, or withheld it for its trial, within the lessons' TTL.

Selection then measures it like any other and drops it once it has no effect
(:mod:`research_agent.memory.lessons.select`): kept lessons are those whose trial is undecided, or
that were called helpful.
"""

from __future__ import annotations

from collections.abc import Collection

from ...store.names import valid_hostname
from ...store.schema import key_kind
from ...store.targets import stage_of, target_of
from ...store.trials import TrialLedger, trial_states
from ..setting import SITE_KINDS, RunSetting, is_site_lesson
from ..types import Lesson
from .text import written_from_template

__all__ = ["kept_for_trial", "KEPT_STATUSES"]

KEPT_STATUSES = ("measuring", "active", "helpful")  # a kept lesson with any other status is not offered


def _last_uses(ledger: TrialLedger, domain: str) -> dict[str, str]:
    """Each lesson key's newest run of ``domain`` that was given it or withheld it for its trial."""
    last: dict[str, str] = {}
    for row in ledger.ordered(domain):
        for use in row.uses:
            if use.arm == "applied" or use.reason == "trial":
                last[use.key] = row.stamp
    return last


def _fits(key: str, setting: RunSetting | None) -> bool:
    if setting is None or not is_site_lesson(key):
        return True
    if not setting.web:
        return False
    return key_kind(key) not in SITE_KINDS or valid_hostname(key.rsplit(":", 1)[-1])


def kept_for_trial(
    ledger: TrialLedger, domain: str, *, built: Collection[str], cutoff: str, setting: RunSetting | None = None
) -> tuple[Lesson, ...]:
    """The lessons of ``domain`` kept for their trial (see the module docstring): not among the keys
    ``built`` from the critiques kept, used by a run since ``cutoff`` (a sortable stamp: the TTL's
    start). Each is marked ``kept``, its one critique id the run whose critique recorded its text."""
    candidates = sorted((key, text) for (where, key), text in ledger.texts.items() if where == domain and key not in built)
    if not candidates:  # the common case: no scan of the domain's rows at a run's start
        return ()
    states = trial_states(ledger.events)
    last = _last_uses(ledger, domain)
    kept = []
    for key, recorded in candidates:
        state = states.get((domain, key))
        if last.get(key, "") < cutoff:
            continue
        if state is not None and state.decision is not None and state.decision.event == "retired":
            continue
        if not written_from_template(key, recorded.text) or not _fits(key, setting):
            continue
        kept.append(Lesson(key, stage_of(key), target_of(key), recorded.text, (recorded.run,), kept=True))
    return tuple(kept)
