"""A citation's passage: the best-matching window of at most 120 words of its source's text."""

from __future__ import annotations

from research_agent.text.passage_window import PASSAGE_WORDS, best_window

FILLER = " ".join(
    f"Background note {word} describes routine maintenance in general terms without any particular claim."
    for word in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda",
                 "mu", "nu", "xi", "omicron")
)  # fmt: skip
FACT = "The freeze map lets VACUUM skip pages whose tuples are all frozen, which makes anti-wraparound scans cheap."
AFTER = "Later notes return to general remarks about routine maintenance."


def test_the_window_is_the_cited_sentence_even_far_past_the_opening_words() -> None:
    text = f"{FILLER} {FACT} {AFTER} {FILLER}"
    assert len(FILLER.split()) > PASSAGE_WORDS  # a preview of the opening words would miss it
    window = best_window("VACUUM skips pages whose tuples are all frozen thanks to the freeze map [2].", text)
    assert FACT in window.text
    assert len(window.text.split()) <= PASSAGE_WORDS and window.end - window.start == len(window.text.split())
    assert window.text.split()[window.text.split().index("The") - 1].endswith(".")  # whole sentences
    assert window.cut_before and window.cut_after and window.total == len(text.split())
    assert set(window.matched) >= {"vacuum", "freeze", "map", "page", "frozen"} and window.support > 0.8


def test_a_window_holds_at_most_max_words_and_never_cuts_a_sentence_it_could_keep() -> None:
    text = f"{FACT} {AFTER} {FILLER}"
    window = best_window(FACT, text, max_words=30)
    assert window.start == 0 and window.text.startswith(FACT) and len(window.text.split()) <= 30
    assert window.text.endswith(".")


def test_a_sentence_longer_than_the_window_gives_its_best_part() -> None:
    long_sentence = (
        " ".join(["filler"] * 300) + " the rare zebra appears here " + " ".join(["filler"] * 300) + "."
    )
    window = best_window("Where does the rare zebra appear?", long_sentence, max_words=40)
    assert "rare zebra appears" in window.text and len(window.text.split()) == 40


def test_a_claim_the_source_does_not_hold_gets_the_opening_words_and_no_support() -> None:
    window = best_window("Quantum chromodynamics explains tides.", f"{FACT} {FILLER}")
    assert window.start == 0 and window.matched == () and window.support == 0.0
    assert len(window.text.split()) == PASSAGE_WORDS


def test_empty_text_and_a_sentence_without_key_terms() -> None:
    empty = best_window("Anything at all.", "")
    assert (empty.text, empty.start, empty.end, empty.total) == ("", 0, 0, 0)
    assert best_window("It is what it is.", FACT).support == 1.0  # nothing to look for: nothing missing
