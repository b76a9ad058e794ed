"""The skeptic reads the draft and only the passages the draft cites (issue 13)."""

from __future__ import annotations

from research_agent.run.report import ReportMeta, compose_report
from research_agent.sources import Source
from research_agent.stages.skeptic import run_skeptic
from research_agent.stages.writing.synthesize import ReportDraft
from research_agent.text.cited import cited_passages, citing_sentences


def paragraphs(*topics: str) -> str:
    """One paragraph of about 60 words per topic, each naming its topic several times."""
    return "\n\n".join(
        " ".join(f"The {topic} passage explains {topic} detail number {k} for careful readers." for k in range(6))
        for topic in topics
    )


def source(n: int, text: str) -> Source:
    return Source(
        key=f"/docs/s{n}.md", title=f"Source {n}", location=f"/docs/s{n}.md", site=f"/docs/s{n}.md",
        text=text, provider="local",
    )  # fmt: skip


SOURCES = (
    source(1, paragraphs("vacuum", "autovacuum", "freezing")),
    source(2, paragraphs("bloat", "indexes")),
    source(3, paragraphs("checkpoints", "replication")),
)

DRAFT = ReportDraft(
    executive_summary="Freezing detail keeps old rows readable [1].",
    key_findings=("Replication detail needs care for careful readers [3].",),
    sections=(("What the sources say", "The autovacuum passage explains autovacuum detail [1]. Plain prose."),),
    limitations=(),
)


def rendered_draft() -> str:
    meta = ReportMeta("How does maintenance work?", "standard", "2025-01-01", "m", "full_report")
    markdown = compose_report(DRAFT, SOURCES, meta=meta, skeptic=None, final=False).markdown
    return markdown


def test_each_citing_sentence_brings_the_passage_it_matches():
    texts = [s.text for s in SOURCES]
    evidence = cited_passages(rendered_draft(), texts, token_budget=10_000)
    assert set(evidence.passages) == {1, 3}  # source 2 is never cited
    (first, second) = evidence.passages[1]  # in document order
    assert "autovacuum" in first and "The vacuum passage" not in first
    assert "freezing" in second
    (only,) = evidence.passages[3]
    assert "replication" in only and "checkpoints" not in only
    assert (evidence.claims, evidence.shown) == (3, 3)


def test_citing_sentences_keep_code_words_and_ignore_uncited_prose():
    found = list(citing_sentences("Use `VACUUM FULL` to shrink [2]. Nothing cited here.\n- A list item [1, 3]."))
    assert found == [("Use `VACUUM FULL` to shrink .", (2,)), ("A list item .", (1, 3))]


def test_the_budget_goes_first_to_the_claims_their_source_supports_least():
    texts = [paragraphs("alpha", "beta", "gamma")]
    markdown = (
        "The alpha passage explains alpha detail number one for careful readers [1]. "
        "Beta is said to cure every known illness overnight [1]."
    )
    evidence = cited_passages(markdown, texts, token_budget=150)  # room for one passage of about 100 tokens
    (only,) = evidence.passages[1]
    assert "beta" in only  # the claim the text does not bear out is the one checked
    assert (evidence.claims, evidence.shown) == (2, 1)


async def test_the_skeptic_prompt_holds_the_draft_and_only_the_cited_passages(scripted_model):
    scripted_model.enqueue("skeptic", {"findings": [], "viability": 80})
    report = await run_skeptic(
        scripted_model, "How does maintenance work?", rendered_draft(), SOURCES,
        lenses=("evidence",), source_tokens=450, cited_tokens=1200,
    )  # fmt: skip
    assert report.viability == 80
    (request,) = scripted_model.calls("skeptic")
    prompt = request.user
    for cited in ("autovacuum", "freezing", "replication"):
        assert f"The {cited} passage explains" in prompt
    for uncited in ("The vacuum passage", "bloat", "indexes", "checkpoints"):
        assert uncited not in prompt  # an uncited source, or an uncited passage of a cited one
    assert "[1] Source 1 — /docs/s1.md" in prompt and "[3] Source 3 — /docs/s3.md" in prompt
    assert "Source 2" not in prompt
    # the draft as the writer wrote it: no front matter, no Sources list, no placeholder analysis
    assert "gate_decision:" not in prompt and "## Sources" not in prompt and "Adversarial" not in prompt
    assert "Freezing detail keeps old rows readable [1]." in prompt
    assert "the passage behind each of the draft's 3 citations" in prompt


async def test_a_draft_that_cites_nothing_sends_no_source_text(scripted_model):
    scripted_model.enqueue("skeptic", {"findings": [], "viability": 40})
    await run_skeptic(
        scripted_model, "q", "# Title\n\nNo citations at all.\n", SOURCES,
        lenses=("evidence",), source_tokens=450, cited_tokens=1200,
    )  # fmt: skip
    prompt = scripted_model.calls("skeptic")[0].user
    assert "passage explains" not in prompt and "(the draft cites no source)" in prompt
