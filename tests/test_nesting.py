"""The nesting pre-scan: deep texts are caught before any parser sees them, real ones pass."""

from __future__ import annotations

import json
import random
import tomllib
from pathlib import Path

import pytest
import yaml

from research_agent.files.nesting import MAX_NESTING, json_depth, nesting_problem, toml_depth, yaml_depth
from tests.support.memory import make_critique

# Patterns that nest once per repetition; 60,000 levels fit in the 64 KB critique cap,
# and about 30,000 crash libyaml's composer.
YAML_BOMBS = ["[", "{a: ", "- ", "? ", "[{", "- [", "a: [", "[a: ", "{? ", "- - {"]


@pytest.mark.parametrize("unit", YAML_BOMBS)
def test_deep_yaml_is_measured_deep_in_every_form(unit: str) -> None:
    text = unit * (60_000 // len(unit))
    assert yaml_depth(text, stop=MAX_NESTING + 1) > MAX_NESTING
    assert nesting_problem(text, "yaml") == f"nested too deeply (more than {MAX_NESTING} levels)"


def test_deep_block_indentation_and_indentless_sequences_count() -> None:
    staircase = "".join(" " * i + "a:\n" for i in range(150))
    assert yaml_depth(staircase) >= 150
    indentless = "".join("  " * i + "- b:\n" + "  " * i + "  - c:\n" for i in range(60))
    assert yaml_depth(indentless) >= 120


def test_brackets_inside_quotes_comments_and_block_scalars_do_not_count() -> None:
    text = (
        "a: '[[[[[[ it''s [[[['\n"
        'b: "{{{{ \\" [[[["\n'
        "c: x [[[[ plain text in block context\n"
        "# [[[[[[[[ a comment\n"
        "d: |\n  [[[[[[[[[[ literal\n  {{{{{{{\n"
        "e: >-\n    [[[[ folded\n"
        "f: [1, 'x]]]', \"y}}\", [2]]\n"
    )
    assert yaml.safe_load(text)["f"] == [1, "x]]]", "y}}", [2]]
    assert yaml_depth(text) <= 4


def test_real_files_read_shallow() -> None:
    critique = yaml.safe_dump(make_critique(tags=("single_site",)).as_dict(), sort_keys=False)
    assert yaml_depth(critique) <= 6  # facts.sites.per_site[i].site is the deepest
    front = "query: 'How? [1] {x}'\nmode: standard\ndate: '2026-11-22'\n"
    assert yaml_depth(front) <= 2
    rules = Path(__file__).with_name("test_review_rules.py").read_text()
    block = rules.split('GOOD = """\\\n', 1)[1].split('"""', 1)[0]
    assert yaml_depth(block) <= 5


def _event_depth(text: str) -> int:
    """How deep libyaml's parser really goes (events only: no recursion, no crash)."""
    depth = best = 0
    try:
        for event in yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                best = max(best, depth)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        pass  # the parser stops here, and so does the depth it reaches
    return best


_PIECES = ["a", "b c", "don't", "x: y", "[z", "]", "{", "}", "#h", "- q", "'", '"', "|", ">", "&a", "!t", "?",
           ":", "\n", "  ", "\t", ",", "*a", "---", "\\"]
_CHARS = list("[]{}-?:'\"#|>!&*, \t\n\\ab")


def _random_value(rng: random.Random, depth: int) -> object:
    roll = rng.random()
    if depth <= 0 or roll < 0.3:
        return rng.choice([rng.choice(_PIECES) + rng.choice(_PIECES), 1, None, "multi\nline " * rng.randint(0, 2)])
    if roll < 0.65:
        return [_random_value(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(_PIECES) + str(i): _random_value(rng, depth - 1) for i in range(rng.randint(0, 3))}


def test_the_scan_never_reads_shallower_than_the_parser_goes() -> None:
    """Over generated documents in every style, damaged at random, the scan is an upper bound."""
    rng = random.Random(20261122)
    for _ in range(1500):
        value = _random_value(rng, rng.randint(0, 25))
        text = yaml.safe_dump(
            value,
            default_flow_style=rng.choice([None, True, False]),
            width=rng.choice([12, 80, 1000]),
            indent=rng.choice([2, 4]),
            default_style=rng.choice([None, None, "'", '"', "|", ">"]),
        )
        for _ in range(rng.randint(0, 8)):
            at = rng.randint(0, len(text))
            insert = "".join(rng.choice(_CHARS) for _ in range(rng.randint(1, 4)))
            text = text[:at] + insert + text[at:]
        assert yaml_depth(text) >= _event_depth(text), text


def _json_value(rng: random.Random, depth: int) -> object:
    if depth <= 0 or rng.random() < 0.3:
        return "".join(rng.choice(['[', ']', '{', '}', '"', "\\", "a", "#", "'"]) for _ in range(rng.randint(0, 5)))
    if rng.random() < 0.5:
        return [_json_value(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    return {_json_value(rng, 0): _json_value(rng, depth - 1) for _ in range(rng.randint(0, 3))}


def _depth_of(value: object) -> int:
    if isinstance(value, list):
        return 1 + max((_depth_of(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth_of(v) for v in value.values()), default=0)
    return 0


def test_json_depth_is_exact() -> None:
    rng = random.Random(7)
    for _ in range(1000):
        value = _json_value(rng, rng.randint(0, 12))
        assert json_depth(json.dumps(value, indent=rng.choice([None, 1]))) == _depth_of(value)
    assert json_depth("[" * 100_000, stop=MAX_NESTING + 1) == MAX_NESTING + 1


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ('model = "gpt-4o-mini"\nmin_viability = 60\n', 0),
        ("x = [[1.5, 2.5], {c.d = 1}]\n", 3),
        ("[a.b]\nx = [[1]]\n", 4),
        ("a.b.c = 1\n", 2),
        ('x = "[[[" # [[[[\ny = \'{{{\'\nz = """\n[[[\n"""\nw = \'\'\'[[[\'\'\'\n', 0),
        ('"gpt-4o" = { input = 2.5, output = 10.0 }\n["gpt-4.1"]\ninput = 2.0\n', 1),
    ],
)
def test_toml_depth_counts_brackets_and_dotted_keys(text: str, depth: int) -> None:
    assert toml_depth(text) == depth
    assert _depth_of(tomllib.loads(text)) - 1 <= depth


@pytest.mark.parametrize(
    "text",
    ["x = " + "[" * 60_000, "x = " + "{a = " * 20_000, "a" + ".a" * 20_000 + " = 1", "[" + "a." * 20_000 + "a]"],
)
def test_deep_toml_is_caught(text: str) -> None:
    assert nesting_problem(text, "toml") == f"nested too deeply (more than {MAX_NESTING} levels)"
    assert toml_depth(text, stop=MAX_NESTING + 1) == MAX_NESTING + 1  # the scan stops once past the limit
    at_limit = "x = " + "[" * MAX_NESTING + "]" * MAX_NESTING  # as deep as allowed, and no deeper
    assert toml_depth(at_limit) == MAX_NESTING and nesting_problem(at_limit, "toml") is None
