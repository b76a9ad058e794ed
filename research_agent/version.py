"""The installed version of research-agent, read from the package metadata.

``pyproject.toml`` is the only place the number is written; this reads it back once,
for ``research_agent.__version__``, ``--version`` and the fetcher's User-Agent.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["__version__", "installed_version"]


def installed_version(distribution: str = "research-agent") -> str:
    """The version of ``distribution`` as installed; ``"0"`` when its metadata is missing
    (the source tree imported without being installed)."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "0"


__version__ = installed_version()
