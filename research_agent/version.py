"""The installed version of research-agent, read from the package metadata.

``pyproject.toml`` is the only place the number is written; this reads it back once,
for ``research_agent.__version__``, ``--version`` and the fetcher's User-Agent.

The distribution is called :data:`DISTRIBUTION` (``research-agent`` on the public registry
is someone else's project); the import package stays ``research_agent`` and the command
``research-agent``.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["__version__", "DISTRIBUTION", "installed_version", "extra_hint"]

DISTRIBUTION = "cited-research-agent"


def installed_version(distribution: str = DISTRIBUTION) -> str:
    """The version of ``distribution`` as installed; ``"0"`` when its metadata is missing
    (the source tree imported without being installed)."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "0"


def extra_hint(extra: str) -> str:
    """How to install an optional extra of this (already installed) distribution."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


__version__ = installed_version()
