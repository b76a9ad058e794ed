"""Memory and CPU of a process tree, for the benchmarks (Linux /proc; elsewhere zeros).

``ru_maxrss`` of ``RUSAGE_CHILDREN`` is the peak of the largest single waited-for child,
not a sum, and extraction workers are not even our children (the fork server starts
them). :class:`TreeSampler` reads ``/proc`` every ``interval`` seconds instead: this
process and every process below it, except those excluded (a page server).

Two sums are kept, both peaks over the samples:

* **RSS**: the sum of each process's resident set. Pages shared between processes
  (the fork server's preloaded modules, inherited by every worker) count once per
  process, so this over-states what the tree takes.
* **PSS** (proportional set size): shared pages split between the processes sharing
  them; the sum is what the tree really takes from the machine.

RSS and CPU are read every ``interval`` (from ``statm`` and ``stat``: microseconds);
the tree is looked for again, and PSS read (``smaps_rollup``: milliseconds for a big
process, and it slows the process it reads), only every ``slow_every`` samples. A
sample can miss a peak shorter than the interval; the numbers are for benchmarks.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["TreeSampler", "descendants", "session_members"]

_PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024 if hasattr(os, "sysconf") else 4
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _all_pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def descendants(root: int) -> set[int]:
    """The pids of every living process below ``root``."""
    parents = {pid: int(fields[1]) for pid in _all_pids() if (fields := _stat(pid)) is not None}
    found: set[int] = set()
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in found:
                found.add(pid)
                frontier.append(pid)
    return found


def session_members(sid: int) -> set[int]:
    """The pids of living processes in session ``sid`` (zombies excluded)."""
    members = set()
    for pid in _all_pids():
        fields = _stat(pid)
        if fields is not None and int(fields[3]) == sid and fields[0] != "Z":
            members.add(pid)
    return members


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as handle:
            return int(handle.read().split()[1]) * _PAGE_KB
    except (OSError, ValueError, IndexError):
        return 0


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return _rss_kb(pid)


def _cpu_seconds(pid: int) -> float:
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / _TICKS if fields else 0.0


@dataclass
class TreeSampler:
    """Peak memory and CPU time of this process and its descendants while in a ``with`` block."""

    interval: float = 0.05
    slow_every: int = 20
    exclude: Iterable[int] = ()
    peak_rss_mb: float = 0.0  # this process + descendants
    peak_pss_mb: float = 0.0
    peak_children_rss_mb: float = 0.0  # descendants only
    children_seen: int = 0
    _tree: set[int] = field(default_factory=set)
    _cpu_start: dict[int, float] = field(default_factory=dict)
    _cpu_last: dict[int, float] = field(default_factory=dict)
    _seen: set[int] = field(default_factory=set)
    _ticks: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    @property
    def children_cpu_s(self) -> float:
        """CPU seconds the descendants used during the block (as of the last sample)."""
        return sum(cpu - self._cpu_start.get(pid, 0.0) for pid, cpu in self._cpu_last.items())

    def _find_tree(self) -> None:
        self._tree = descendants(os.getpid()) - set(self.exclude)
        self._seen |= self._tree
        self.children_seen = len(self._seen)

    def sample(self, *, slow: bool = False) -> None:
        """Read RSS and CPU now; with ``slow``, look for new processes and read PSS too."""
        if slow:
            self._find_tree()
        me = os.getpid()
        child_rss = 0
        for pid in self._tree:
            child_rss += _rss_kb(pid)
            if (cpu := _cpu_seconds(pid)) > 0:
                self._cpu_last[pid] = cpu
        self.peak_rss_mb = max(self.peak_rss_mb, (_rss_kb(me) + child_rss) / 1024)
        self.peak_children_rss_mb = max(self.peak_children_rss_mb, child_rss / 1024)
        if slow:
            pss = _pss_kb(me) + sum(_pss_kb(pid) for pid in self._tree)
            self.peak_pss_mb = max(self.peak_pss_mb, pss / 1024)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._ticks += 1
            self.sample(slow=self._ticks % self.slow_every == 0)

    def __enter__(self) -> TreeSampler:
        self._find_tree()
        self._cpu_start = {pid: _cpu_seconds(pid) for pid in self._tree}
        self.sample(slow=True)
        self._thread = threading.Thread(target=self._loop, name="tree-sampler", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.sample()

    def summary(self) -> str:
        """One line: the peaks and the descendants' CPU."""
        return (
            f"peak RSS (this process + {self.children_seen} below it; RSS every "
            f"{self.interval * 1000:.0f} ms, PSS every {self.interval * self.slow_every:g} s): "
            f"{self.peak_rss_mb:.0f} MB as a sum of RSS, {self.peak_pss_mb:.0f} MB as a sum of PSS; "
            f"below it: {self.peak_children_rss_mb:.0f} MB RSS, {self.children_cpu_s:.1f} s CPU"
        )
