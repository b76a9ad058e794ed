"""Holds the command line in the middle of its start-up, for tests/test_signals.py.

Python imports ``sitecustomize`` at start when it is on the path (the test puts this folder on
PYTHONPATH). When the CLI then imports ``research_agent.cli.root`` (typer, rich, every command:
the bulk of start-up), this finder writes a byte to the FIFO named by ``HOLD_ARRIVED`` and waits
(at most a minute) for the test's signal: its handler interrupts the wait, inside the import.
"""

import os
import select
import sys


class _Hold:
    def find_spec(self, name, path=None, target=None):
        if name == "research_agent.cli.root" and os.environ.get("HOLD_ARRIVED"):
            arrived = os.open(os.environ["HOLD_ARRIVED"], os.O_WRONLY | os.O_NONBLOCK)
            os.write(arrived, b"1")
            os.close(arrived)
            select.select([], [], [], 60.0)  # a signal's handler raises out of this wait
        return None  # the ordinary finders import it


sys.meta_path.insert(0, _Hold())
