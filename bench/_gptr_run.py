"""One GPT Researcher run over a local folder; started by compare_gpt_researcher.py.

Runs under GPT Researcher's own interpreter (its venv), so it imports nothing from this
repository. Its configuration comes from the environment the caller sets (REPORT_SOURCE
local, DOC_PATH, the models and OPENAI_BASE_URL on 127.0.0.1, a retriever that finds
nothing). It writes the report to OUT and exits 0, or prints one line and exits 1.

    python _gptr_run.py QUESTION OUT
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile


async def research(question: str) -> str:
    from gpt_researcher import GPTResearcher  # imported here: its import time counts in the run

    researcher = GPTResearcher(query=question, report_type="research_report", report_source="local", verbose=False)
    await researcher.conduct_research()
    return await researcher.write_report()


def write_atomic(path: str, text: str) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    handle, temp = tempfile.mkstemp(dir=folder, prefix=".gptr-", suffix=".md")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temp, path)


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: _gptr_run.py QUESTION OUT", file=sys.stderr)
        return 2
    question, out = sys.argv[1], sys.argv[2]
    try:
        report = asyncio.run(research(question))
    except Exception as exc:  # noqa: BLE001 - the caller wants one line, whatever broke
        print(f"GPT Researcher failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    if not report.strip():
        print("GPT Researcher wrote an empty report", file=sys.stderr)
        return 1
    write_atomic(out, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
