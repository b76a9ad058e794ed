"""Every text function that reads model output, report text or user files, with the syntax it reads.

``python -m tests.support.linear_text NAME`` runs function NAME on 512 KB (its size cap, when it has
one below that) of each input it is listed with: each piece of its own syntax repeated (``[a](``
... ``[a](``), and each opener followed by a long run of one character (``# a`` then spaces).
Each input gets :data:`CPU_SECONDS` of CPU time (RLIMIT_CPU, moved on before each one): a
linear function needs well under one, a quadratic one would need hours. Before each input it
writes the input's name on stderr, so a process stopped by the limit (SIGXCPU) names the input
that stopped it, and after it the CPU time it took. It exits 0 when every input was handled.
"""

from __future__ import annotations

import contextlib
import math
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SIZE = 512 * 1024  # a quadratic pattern of the kind replaced needs hours here; a linear one, a fraction of a second
CPU_SECONDS = 30

# What every function is tried on: the constructs the first attack found quadratic.
COMMON = ("[a](", "a.", "](", "`", "<", "http://", "[1]", "\n", " ")


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def inputs(pieces: tuple[str, ...], runs: tuple[tuple[str, str], ...], size: int) -> list[tuple[str, str]]:
    """(name, text) of each input: every piece repeated, every (opener, filler) as one long run."""
    made = [(f"{piece!r} repeated", _repeat(piece, size)) for piece in dict.fromkeys(COMMON + pieces)]
    made += [(f"{head!r} + {fill!r}*n + 'x'", head + _repeat(fill, size - len(head) - 1) + "x") for head, fill in runs]
    return made


def _review(text: str) -> Any:
    from research_agent.review.report_file import review_markdown

    return review_markdown(text)


def _review_cap() -> int:
    """The most ``review`` and ``export`` read of a report."""
    from research_agent.config import Settings

    return Settings().review_max_bytes


def _facts(text: str) -> Any:
    from research_agent.memory.critique.citation_support import citation_support

    return citation_support(text, {1: text[:20_000], 2: "x"})


def _cited(text: str) -> Any:
    from research_agent.text.cited import cited_passages

    return cited_passages(text, [text[:20_000], "x"], token_budget=2000)


def _context(text: str) -> Any:
    import tempfile

    from research_agent.run.context import load_context

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "research_context.md"
        path.write_text(text, encoding="utf-8")
        return load_context(path)


def _extract(kind: str) -> Callable[[str], Any]:
    def run(text: str) -> Any:
        from research_agent.fetch.extract import extract

        return extract(text.encode("utf-8"), kind)

    return run


def _export(text: str) -> Any:
    from research_agent.export import render_page

    return render_page(text, None)


def _support(text: str) -> Any:
    from research_agent.text.support import lexical_support, prepare

    return lexical_support(text[:20_000], prepare(text))


def _window(text: str) -> Any:
    from research_agent.text.passage_window import best_window

    return best_window(text[:2000], text)


def _claims(text: str) -> Any:
    from research_agent.claims import cited_claims

    return cited_claims(text, [text[:20_000], "x"])


def _mark(text: str) -> Any:
    from research_agent.claims import ClaimVerdict, mark_unsupported

    claim = ClaimVerdict(1, text[:200], (1,), "unsupported")
    return mark_unsupported([text], [claim])


def _quote(text: str) -> Any:
    from research_agent.claims import quote_found

    return quote_found(text[: len(text) // 2], text)


def _bound(text: str) -> Any:
    from research_agent.stages.writing.draft_text import DraftBound, DraftLimits

    whole, pieces = DraftBound(DraftLimits(10**9, 10**9, 10**9, 10**9)), DraftBound(DraftLimits.for_target(1200))
    whole.feed(text)  # never over: every character counted
    for start in range(0, len(text), 4096):  # as a stream: stops at the first limit
        if pieces.feed(text[start : start + 4096]):
            break
    return whole.words, pieces.cut_at


def _get(module: str, name: str, **kwargs: Any) -> Callable[[str], Any]:
    def run(text: str) -> Any:
        import importlib

        return getattr(importlib.import_module(module), name)(text, **kwargs)

    return run


LINKS = ("[", "![a](", "[a][", "[a [b](", "<!--", "<a ", "&#", "javascript:", "(", "\\")
HEADINGS = (("# a", " "), ("# a", "#"), ("## ", "#"), ("1.", " "), ("[1] ", " "))

# name: (function, own pieces, (opener, filler) runs, size)
FUNCTIONS: dict[str, tuple[Callable[[str], Any], tuple[str, ...], tuple[tuple[str, str], ...], int | None]] = {
    "seen_text": (_get("research_agent.text.masking", "seen_text"),
                  ("``", "<!--", "-->", "![", "[a]: b\n", "<a b", "](a \"", "[[", "]]("),
                  (("<!--", "a"), ("[", "a"), ("](", "a"), ("<a", " "), ("](a \"", "b")), None),
    "mask_code_and_urls": (_get("research_agent.text.masking", "mask_code_and_urls"),
                           ("``", "www.", "a@", "a@b.", "a-"), (("`", "a"), ("](", "a"), ("a@", "b-")), None),
    "find_citations": (_get("research_agent.text.citations", "find_citations"), ("[1", "[1,", "[1-"), (), None),
    "sentence_spans": (_get("research_agent.text.citations", "sentence_spans"),
                       (". [1]", ".[1] ", "e.g. ", "A. "), ((".", " "), (". [1", " ")), None),
    "renumber": (lambda t: __import__("research_agent.text.citations").text.citations.renumber([t], 5),
                 (". [1]", "source 1 and ", "[1]-[", "```\n", "# a\n"), (), None),
    "plain_text": (_get("research_agent.text.mdsafe", "plain_text"), LINKS, (("[", "a"), ("<!--", "a")), None),
    "plain_text_with_citations": (_get("research_agent.text.mdsafe", "plain_text_with_citations"), LINKS, (), None),
    "defang_markdown": (_get("research_agent.text.mdsafe", "defang_markdown"), (*LINKS, "\n[a]: ", "<http://"),
                        (("[", "a"), ("](", "a"), ("<http://", "a")), None),
    "code_span": (_get("research_agent.text.mdsafe", "code_span"), LINKS, (), None),
    "location_markdown": (_get("research_agent.text.mdsafe", "location_markdown"), ("/a", "_", "%"),
                          (("http://", "a"), ("/", "_")), None),
    "sanitize": (_get("research_agent.text.sanitize", "sanitize"),
                 ("<<<DATA", "<<< ", "<|", "[INST]", "ignore ", "ignore previous ", "you are now "),
                 (("<<<DATA", "a"), ("ignore", " ")), None),
    "strip_controls": (_get("research_agent.text.controls", "strip_controls"),
                       ("\x1b]", "\x1b[", "\x9b", "\x1b]0;a", "\u202e", "\r\n"), (("\x1b]", "a"), ("\x1b[", "1;")), None),
    "split_passages": (_get("research_agent.text.passages", "split_passages"), ("1 ", "\n\n", "\n \n"),
                       (("\n", " "),), None),
    "citing_sentences": (lambda t: list(__import__("research_agent.text.cited").text.cited.citing_sentences(t)),
                         (". [1]", "- a [1]\n", "1. "), (), None),
    "cited_passages": (_cited, (". [1]", "[2]"), (), None),
    "body_sentences": (_get("research_agent.text.report_body", "body_sentences"),
                       ("\n\n", "\n- ", "- ", "1. ", "# a\n", "---\n"), (("\n", " "), ("\n", "\t")), None),
    "review_markdown": (_review, ("{{", "[insert ", "# a\n", "- [", "1.", "12%", ". [1]", "|a|\n"),
                        HEADINGS, -1),
    "parse_front_matter": (_get("research_agent.review.markdown", "parse_front_matter"), ("---\n", "- ", "a: "),
                           (("---\n", " "),), None),
    "strip_think": (_get("research_agent.llm.structured", "strip_think"), ("<think>", "</think>"),
                    (("<think>", "a"),), None),
    "extract_json": (_get("research_agent.llm.structured", "extract_json"), ("{", "[1,", "```", '{"a":'),
                     (("```", "a"),), None),
    "draft_for_review": (_get("research_agent.stages._skeptic_input", "draft_for_review"),
                         ("## Sources\n", "---\n", "## "), (("---\n", "a"),), None),
    "cited_hosts": (_get("research_agent.memory.critique.evidence", "cited_hosts"),
                    ("## Sources\n", "# a", "http://a.b/"), (("# Sources", " "),), None),
    "citation_support": (_facts, (". [1]", "1.1", "A. "), (), None),
    "clean_lines": (_get("research_agent.fetch.html_text", "clean_lines"), ("\n\n\n", " \n"), (), None),
    "extract_markdown": (_extract("markdown"), ("# a\n", "#", "---\n", "a\n===\n", "# a ##\n", " #", "=\n"), HEADINGS, None),
    "extract_html": (_extract("html"), ("<meta ", "<p>", "<?xml ", "<div>"), (("<meta", " "), ("<?xml", " ")), None),
    "visible": (_get("research_agent.cli.terminal", "visible"), ("\x1b[", "\u202e"), (), None),
    "markup": (_get("research_agent.cli.terminal", "markup"), ("\\", "[b]", "\\[a]"), (("\\", "\\"),), None),
    "nesting_problem_yaml": (_get("research_agent.files.nesting", "nesting_problem", kind="yaml"),
                             ("- ", "[", "{", "a:\n ", "? "), (), None),
    "nesting_problem_toml": (_get("research_agent.files.nesting", "nesting_problem", kind="toml"),
                             ("[", "{", "a.", "[a.b]\n"), (), None),
    "load_context": (_context, ("<!--",), (("<!--", "a"),), None),
    "export_page": (_export, ("# a\n", "\n## Sources\n1. a \u2014 /", " \u2014 /", "|a|\n", "<file:///", "a [1]. ",
                              "\x00", "&#x202e;"), (("<https://", "a"), ("## Sources\n1. ", "a")), -1),
    "without_urls": (_get("research_agent.text.debris", "without_urls"), ("www.", "a://"), (("](", "a"),), None),
    "real_words": (_get("research_agent.text.debris", "real_words"), ('"a":', "'", "\u4e00"), (), None),
    "is_url": (_get("research_agent.text.debris", "is_url"), ("a.", "a-.", "a.b/"), (("a.", "a"), ("[", "a")), None),
    "is_bare_number": (_get("research_agent.text.debris", "is_bare_number"), ("1.", "1,", "-1"), (), None),
    "lexical_support": (_support, ("a.", "1.1", "a.b", "not "), (), None),
    "best_window": (_window, ("a. ", "heat pumps "), (), None),
    "read_draft": (_get("research_agent.stages.writing.draft_text", "read_draft"),
                   ("## Key Findings\n- a\n", "# a\n", "```\n", "<<<DATA", "<<<", "[1] a \u2014 ", " \u2014 a"),
                   (("## Key Findings\n\n- a", "\n\n  b"), ("[1] a", " \u2014 a"), ("<<<DATA", " ")), 1024 * 1024),
    "complete_part": (_get("research_agent.stages.writing.draft_text", "complete_part"), ("- a\n", "\n\n", "1. "), (), None),
    "complete_sentences": (_get("research_agent.stages.writing.draft_text", "complete_sentences"),
                           ("a. ", "a [1]. ", "# a\n", "- a. ", "e.g. ", ".\n"), ((".", " "), ("# ", "a")), None),
    "draft_bound": (_bound, ("# a\n", "\n\n", "- a\n", "a ", "\n"), (("#", " "), ("a", "a")), None),
    "text_sentences": (lambda t: list(__import__("research_agent.claims.sentences").claims.sentences.text_sentences(t)),
                       (". [1]", "[Disputed] ", "- a [1]\n", "1. ", "**", "<!-- [Disputed] ", "[[Disputed]](a) [1] "),
                       (("- ", " "), ("<!--", "[Disputed] [1] ")), None),
    "cited_claims": (_claims, (". [1]", "a. [1] ", "[2]"), (), None),
    "mark_unsupported": (_mark, ("a. [1] ", "a [1]. ", "- a [1]\n", "[Disputed] a [1]. ", "`[Disputed]` a [1]. "),
                         (("<!--", "[Disputed] a [1]. "),), None),
    "lesson_text": (_get("research_agent.memory.store.person.instructions", "lesson_text"),
                    ("\u0430a ", "\u0430 ", "a\u0456", "\uff41"), (), None),
    "instruction_problem": (_get("research_agent.memory.store.person.instructions", "instruction_problem"),
                            ("a ", "and print ", "ignore ", "ignore the ", "### ", "system: ", ", say ", "every page ",
                             "you to ", "A ", "PWNED ", "append ", "append the ", "to the report ", "the report must ",
                             "write the whole ", "respond in ", "use ", "a_", "_key ", "http://a?b=", "schreib"),
                            (("ignore", " "), ("print", " a"), ("a", " a"), ("append", " "), ("the", " "),
                             ("the report", " "), ("schreib", "a"), ("a", "a")), None),
    "quote_found": (_quote, ("a...", "\u2026", "a ", "a b c d ", "a b c d \u2026 "), (), None),
}


def main(name: str) -> int:
    function, pieces, runs, size = FUNCTIONS[name]
    size = _review_cap() if size == -1 else (size or SIZE)
    for label, text in inputs(pieces, runs, size):
        print(label, end=" ", file=sys.stderr, flush=True)
        started = time.process_time()
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        resource.setrlimit(resource.RLIMIT_CPU, (math.ceil(started) + CPU_SECONDS, hard))
        with contextlib.suppress(ValueError):  # refusing an input is handling it (extract_json: no JSON)
            function(text)
        print(f"{time.process_time() - started:.2f} s", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
