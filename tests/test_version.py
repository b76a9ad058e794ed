"""One version source: the package metadata, which pyproject.toml writes, under our own distribution name."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import research_agent
from research_agent.fetch import DEFAULT_USER_AGENT
from research_agent.version import DISTRIBUTION, extra_hint, installed_version

PYPROJECT = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_distribution_is_ours_and_the_command_and_package_keep_their_names() -> None:
    project = PYPROJECT["project"]
    assert project["name"] == DISTRIBUTION == "cited-research-agent"  # "research-agent" on PyPI is a stranger's
    assert project["scripts"] == {"research-agent": "research_agent.cli:main"}
    assert importlib.metadata.distribution(DISTRIBUTION).read_text("top_level.txt") in (None, "research_agent\n")
    assert extra_hint("mcp") == "pip install 'cited-research-agent[mcp]'"


def test_the_version_comes_from_the_package_metadata_alone() -> None:
    installed = importlib.metadata.version(DISTRIBUTION)
    assert installed == PYPROJECT["project"]["version"]
    assert research_agent.__version__ == installed
    assert DEFAULT_USER_AGENT.startswith(f"research-agent/{installed} ")


def test_version_flag_prints_the_pyproject_version() -> None:
    cli = Path(sys.executable).parent / "research-agent"
    proc = subprocess.run([str(cli), "--version"], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (0, f"research-agent {PYPROJECT['project']['version']}\n")


def test_the_version_is_0_only_when_the_metadata_is_missing() -> None:
    assert installed_version("no-such-distribution-for-research-agent-tests") == "0"


def test_the_changelog_s_newest_release_is_the_version_with_unreleased_work_above_it() -> None:
    text = (Path(__file__).parents[1] / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## \[(.+?)\](.*)$", text, re.MULTILINE)
    assert headings[0] == ("Unreleased", "")
    releases = headings[1:]
    assert releases and all(re.fullmatch(r" - \d{4}-\d{2}-\d{2}", date) for _, date in releases), releases
    assert releases[0][0] == PYPROJECT["project"]["version"]
    dates = [date for _, date in releases]
    assert dates == sorted(dates, reverse=True)  # newest first
