"""One version source: the package metadata, which pyproject.toml writes."""

from __future__ import annotations

import importlib.metadata

import research_agent
from research_agent.fetch import DEFAULT_USER_AGENT
from research_agent.version import installed_version


def test_the_version_comes_from_the_package_metadata_alone() -> None:
    installed = importlib.metadata.version("research-agent")
    assert research_agent.__version__ == installed
    assert DEFAULT_USER_AGENT.startswith(f"research-agent/{installed} ")


def test_the_version_is_0_only_when_the_metadata_is_missing() -> None:
    assert installed_version("no-such-distribution-for-research-agent-tests") == "0"
