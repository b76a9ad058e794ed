"""``memory show`` for a person: the critique's fields in its file's order, the facts block
as a few short lines, and a score that does not apply shown as ``n/a``."""

from __future__ import annotations

from ..files.safeyaml import dump_yaml
from ..measures import CritiqueFacts
from ..memory.store.critique_types import Critique
from ..memory.store.schema import DIMENSIONS

__all__ = ["describe_critique", "describe_facts"]

_SHOWN_SITES = 5
_SHOWN_SUB_QUERIES = 8


def describe_critique(critique: Critique) -> str:
    """The critique as YAML-like lines; ``facts`` as a short summary (``--json`` has them whole)."""
    data = critique.as_dict()
    data.pop("facts", None)
    scores = data.pop("scores")
    head = {k: data.pop(k) for k in list(data) if k in ("schema_version", "id", "query", "query_domain", "mode",
                                                         "timestamp", "model_version", "report_path")}  # fmt: skip
    lines = [dump_yaml(head).rstrip(), "scores:"]
    lines += [f"  {d}: {'n/a' if scores[d] is None else scores[d]}" for d in DIMENSIONS]
    lines.append(dump_yaml(data).rstrip())
    if critique.facts is not None:
        lines += ["facts:", *(f"  {line}" for line in describe_facts(critique.facts))]
    return "\n".join(lines)


def describe_facts(facts: CritiqueFacts) -> list[str]:
    """The facts block in a few short lines."""
    s, st, c, r = facts.sources, facts.sites, facts.citations, facts.recency
    lines = [
        f"sources: found {s.found}, read {s.fetched}, kept {s.kept}, dropped {s.dropped}, "
        f"unscored {s.unscored}, cited {s.cited}"
        + (" (the user's source limit cut the list)" if s.capped_by_user else ""),
        f"sites: {st.distinct} distinct among kept"
        + (f"; top {st.top} ({round(st.top_share * 100)}% of kept)" if st.top else ""),
    ]
    lines += [
        f"  {p.site}: kept {p.kept}, dropped {p.dropped}, cited {p.cited}" for p in st.per_site[:_SHOWN_SITES]
    ]
    if len(st.per_site) > _SHOWN_SITES:
        lines.append(f"  ... and {len(st.per_site) - _SHOWN_SITES} more site(s)")
    if facts.sub_queries:
        lines.append(f"sub-queries: {len(facts.sub_queries)}, unanswered (nothing kept): {facts.unanswered}")
        lines += [
            f"  {q.index}. found {q.found}, kept {q.kept}, cited {q.cited}: {q.query[:80]}"
            for q in facts.sub_queries[:_SHOWN_SUB_QUERIES]
        ]
    else:
        lines.append("sub-queries: not recorded")
    pairs = ", ".join(f"sentence {p.sentence} -> [{p.source}]" for p in c.weak_pairs)
    lines.append(
        f"citations: {c.sentences} cited sentence(s), {c.weakly_supported} weakly supported "
        f"({round(c.weakly_supported_share * 100)}%)" + (f": {pairs}" if pairs else "")
    )
    if r.dated:
        lines.append(
            f"recency: {r.dated} dated source(s), median age {r.median_age_days} days, {r.oldest_year}-{r.newest_year}"
        )
    else:
        lines.append("recency: no kept source carries a date")
    return lines
