"""Debian's Chromium for the browser tests: found as the export finds it, skipped without one
outside CI (failed in CI, whose .ci/run installs it), launched by Playwright with the export's flags."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from research_agent.errors import ConfigError
from research_agent.export import find_browser
from research_agent.export.browser import browser_command

__all__ = ["chromium_or_skip", "playwright_flags"]


def chromium_or_skip() -> Path:
    try:
        return find_browser()
    except ConfigError:
        if os.environ.get("CI"):
            pytest.fail("CI is set but no Chromium was found: .ci/run installs Debian's chromium")
        pytest.skip("no Chromium installed (CI installs Debian's chromium)")


def playwright_flags(chromium: Path) -> list[str]:
    """The export's launch flags (off the network; no sandbox as root) for Playwright, which picks
    its own profile and headless mode; 127.0.0.1 must resolve, so no host resolver rule."""
    return [arg for arg in browser_command(chromium, Path("/unused"))[1:]
            if not arg.startswith(("--user-data-dir", "--headless", "--host-resolver-rules"))]  # fmt: skip
