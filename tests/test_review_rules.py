"""Custom lint rules from YAML: validated on load, one-line errors naming file and rule."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from research_agent.errors import InputError
from research_agent.review.rules import MAX_RULES_BYTES, Rule, load_rules, parse_rules
from tests.support.files import write_file

GOOD = """\
rules:
  - name: no-hype
    pattern: "\\\\b(?:revolutionary|game-changing)\\\\b"
    reason: hype word that asserts instead of showing evidence
    fix: say what changed and cite it
    severity: warning
    flags: [ignorecase]
  - name: no wikipedia
    pattern: "wikipedia\\\\.org"
    reason: encyclopedia cited as a primary source
    fix: cite the primary source instead
    severity: Critical
    type: sourcing
"""


def write(tmp_path: Path, text: str | bytes, name: str = "rules.yaml") -> Path:
    return write_file(tmp_path / name, text)


def one_line_error(path: Path) -> str:
    with pytest.raises(InputError) as caught:
        load_rules(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"rules file {path}: ")
    return message


def test_good_file_loads_validated_rules(tmp_path: Path) -> None:
    rules = load_rules(write(tmp_path, GOOD))
    assert [r.name for r in rules] == ["no-hype", "no wikipedia"]
    hype, wiki = rules
    assert hype.severity == "warning" and hype.flags == ("ignorecase",) and hype.issue_type == "rule:no-hype"
    assert hype.compiled.flags & re.IGNORECASE
    assert hype.compiled.search("A Revolutionary design")
    assert wiki.severity == "critical" and wiki.issue_type == "sourcing" and wiki.flags == ()


def test_plain_list_and_empty_file_are_accepted(tmp_path: Path) -> None:
    text = "- {name: a, pattern: x+, reason: r, fix: f, severity: warning}\n"
    assert [r.name for r in load_rules(write(tmp_path, text))] == ["a"]
    assert load_rules(write(tmp_path, "", "empty.yaml")) == ()
    assert load_rules(write(tmp_path, "rules: []\n", "none.yaml")) == ()


def test_bad_regex_names_the_rule(tmp_path: Path) -> None:
    message = one_line_error(write(tmp_path, GOOD.replace("wikipedia\\\\.org", "wiki(pedia")))
    assert "rule 'no wikipedia': bad pattern" in message


def test_missing_field_names_the_rule_and_the_field(tmp_path: Path) -> None:
    message = one_line_error(write(tmp_path, GOOD.replace("    fix: say what changed and cite it\n", "")))
    assert "rule 'no-hype': missing field(s) fix" in message


def test_missing_name_uses_the_rule_position(tmp_path: Path) -> None:
    message = one_line_error(
        write(tmp_path, "rules:\n  - {pattern: x, reason: r, fix: f, severity: warning}\n")
    )
    assert "rule #1: missing field(s) name" in message


def test_wrong_severity_is_rejected(tmp_path: Path) -> None:
    message = one_line_error(write(tmp_path, GOOD.replace("severity: warning", "severity: error")))
    assert "rule 'no-hype': severity must be 'critical' or 'warning', not 'error'" in message


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (("flags: [ignorecase]", "flags: [caseless]"), "unknown flag 'caseless'"),
        (("severity: warning", "severty: warning"), "unknown field(s) severty"),
        (('pattern: "\\\\b(?:revolutionary|game-changing)\\\\b"', 'pattern: "a*"'), "matches empty text"),
        (('pattern: "\\\\b(?:revolutionary|game-changing)\\\\b"', "pattern: 12"), "pattern must be a string"),
        (("name: no wikipedia", "name: no-hype"), "rule 'no-hype' is defined twice"),
    ],
)
def test_bad_fields_are_one_line_errors(tmp_path: Path, change: tuple[str, str], expected: str) -> None:
    assert change[0] in GOOD
    assert expected in one_line_error(write(tmp_path, GOOD.replace(*change)))


def test_non_yaml_is_rejected(tmp_path: Path) -> None:
    message = one_line_error(write(tmp_path, "rules: [\n  - name: a\n  pattern: {unclosed\n"))
    assert "not valid YAML" in message


def test_python_tags_are_refused_by_safe_loading(tmp_path: Path) -> None:
    text = "rules: !!python/object/apply:os.system ['echo pwned']\n"
    assert "not valid YAML" in one_line_error(write(tmp_path, text))


def test_wrong_shapes_are_rejected(tmp_path: Path) -> None:
    assert "expected a list of rules" in one_line_error(write(tmp_path, "just a string\n"))
    assert "unknown top-level key(s) extra" in one_line_error(
        write(tmp_path, "rules: []\nextra: 1\n", "b.yaml")
    )
    assert "rule #1: must be a mapping" in one_line_error(write(tmp_path, "- just text\n", "c.yaml"))


def test_size_cap_missing_file_and_bad_encoding(tmp_path: Path) -> None:
    big = write(tmp_path, "# " + "x" * MAX_RULES_BYTES + "\n", "big.yaml")
    assert "larger than" in one_line_error(big)
    assert "not found" in one_line_error(tmp_path / "absent.yaml")
    assert "not UTF-8" in one_line_error(write(tmp_path, b"\xff\xfe\x00rules", "bin.yaml"))


def test_rule_constructed_in_code_is_validated_too() -> None:
    with pytest.raises(InputError, match="rule 'x': bad pattern"):
        Rule("x", "(", "r", "f", "warning")
    with pytest.raises(InputError, match="severity"):
        Rule("x", "a", "r", "f", "fatal")


def test_parse_rules_names_the_source_in_errors() -> None:
    with pytest.raises(InputError, match=r"^my rules: rule 'a': bad pattern"):
        parse_rules("- {name: a, pattern: '[', reason: r, fix: f, severity: warning}", source="my rules")
