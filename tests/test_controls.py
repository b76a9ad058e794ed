"""text.controls: what a model or a stranger wrote loses its terminal and bidi controls, and only those."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import research_agent
from research_agent.text.controls import has_controls, hide_keys, one_line, strip_controls, without_controls


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("plain text\twith a tab\nand a newline", "plain text\twith a tab\nand a newline"),
        ("a\x00b\x07c\x08d", "abcd"),  # NUL, BEL, backspace
        ("red \x1b[31mwarning\x1b[0m done", "red warning done"),  # CSI colour and reset
        ("\x1b]0;pwned title\x07after", "after"),  # OSC window title, BEL-terminated
        ("\x1b]8;;http://x.test\x1b\\link\x1b]8;;\x1b\\", "link"),  # OSC 8 hyperlink, ST-terminated
        ("c1 \x9b31m csi and \x85 nel", "c1  csi and  nel"),  # C1 CSI with its sequence, C1 NEL
        ("left \u202eevil\u202c right", "left evil right"),  # bidi override and pop
        ("\u2066isolate\u2069 \u200fmark", "isolate mark"),
        ("windows\r\nline\rend", "windows\nline\nend"),
        ("caf\u00e9 \u4e2d\u6587 \U0001f600", "caf\u00e9 \u4e2d\u6587 \U0001f600"),  # real text untouched
    ],
)
def test_controls_are_stripped_and_text_is_kept(raw: str, clean: str) -> None:
    assert without_controls(raw) == clean


def test_the_count_is_of_dropped_characters_and_a_newline_is_not_one() -> None:
    text, dropped = strip_controls("a\x1b[31mb\x00\r\nc")
    assert (text, dropped) == ("ab\nc", 6)
    assert strip_controls("nothing here") == ("nothing here", 0)
    assert not has_controls("nothing here") and has_controls("bell\x07")


def test_an_unterminated_osc_loses_only_its_introducer() -> None:
    # A lone ESC ] must not swallow the rest of a report.
    text = "\x1b]0;no terminator\nThe rest of the report stays."
    assert without_controls(text) == "]0;no terminator\nThe rest of the report stays."


def test_stripping_is_linear_on_hostile_runs() -> None:
    # Many introducers with no terminators, each bounded: the work is proportional to the input.
    text = "\x1b]" + "a" * 600 + ("\x1b[" + "1;" * 40) * 20_000
    out, dropped = strip_controls(text)
    assert "\x1b" not in out and dropped > 0


def test_one_line_folds_every_run_of_white_space_and_is_the_only_one() -> None:
    """Issue 47.6: one ``one_line`` serves the whole package (its callers cut or fold further)."""
    assert one_line("  first\nsecond\t\tthird \r\n") == "first second third"
    assert one_line(ValueError("bad\n  value")) == "bad value" and one_line(None) == "None" and one_line("") == ""
    package = Path(research_agent.__file__).parent
    inline = re.compile(r'" "\.join\((?:[^()]|\([^()]*\))*\.split\(\)\)')
    repeats = [f"{path.relative_to(package)}:{number}" for path in sorted(package.rglob("*.py"))
               for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
               if inline.search(line) and path.name != "controls.py"]  # fmt: skip
    assert repeats == [], 'write one_line(x) (research_agent.text.controls), not " ".join(x.split())'


@pytest.mark.parametrize(
    ("logged", "shown"),
    [
        ("HTTP Request: GET http://h/works?search=x&api_key=sk-1&mailto=a", "GET http://h/works?search=x&api_key=***&mailto=a"),
        ("GET /esearch.fcgi?term=vacuum&API_KEY=abc123 200", "GET /esearch.fcgi?term=vacuum&API_KEY=*** 200"),
        ("Authorization: Bearer sk-planted-1, next", "Authorization: Bearer ***, next"),
        ("no address here: api_key=plain", "no address here: api_key=plain"),
    ],
)
def test_hide_keys_shows_a_key_in_an_address_or_a_bearer_token_as_stars(logged: str, shown: str) -> None:
    assert shown in hide_keys(logged)
