"""Small helpers shared by the benchmark scripts."""

from __future__ import annotations

import resource
import sys

__all__ = ["peak_rss_mb"]


def peak_rss_mb(*, children: bool = False) -> float:
    """Peak resident set size of this process (or of its waited-for children) in MB.

    ``ru_maxrss`` is kilobytes on Linux and bytes on macOS.
    """
    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    peak = resource.getrusage(who).ru_maxrss
    scale = 1024 * 1024 if sys.platform == "darwin" else 1024
    return peak / scale
