"""The layout the project was designed with: reports/ and reports/meta/ in the repository, their
generated contents ignored by git; README install lines that name only our package; a README that
fits on a screen and links only to what exists."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


def _ignored(path: str) -> bool:
    proc = subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=ROOT, timeout=30)
    return proc.returncode == 0


def test_reports_and_meta_exist_with_a_readme_and_their_generated_files_are_ignored() -> None:
    readme = (ROOT / "reports" / "README.md").read_text(encoding="utf-8")
    for name in ("run-<id>.yaml", "critique-<id>.yaml", "failed-critique-<id>.yaml", "<id>.md"):
        assert name in readme
    assert (ROOT / "reports" / "meta" / ".gitkeep").is_file()
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    assert not _ignored("reports/README.md") and not _ignored("reports/meta/.gitkeep")
    for generated in ("reports/how-x_20260101T000000000000Z.md", "reports/meta/run-x.yaml",
                      "reports/meta/index.sqlite", "reports/meta/critique.log"):
        assert _ignored(generated), generated


def test_the_readme_installs_only_from_a_checkout_and_names_only_our_package() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    installs = re.findall(r"pip install[^\n`]*", readme)
    assert installs
    for line in installs:
        assert re.search(r"pip install (-q )?-e '?\.(\[[a-z,]+\])?'?", line), line
    assert "pip install 'research-agent" not in readme and "pip install research-agent" not in readme
    commands = re.findall(r"```bash\n(.*?)\n```", readme, re.S)
    assert commands[1] == "python3.11 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/python -m pytest"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[1] in ci, ".ci/run runs exactly the README's test command"


def test_the_readme_is_short_and_opens_with_its_two_commands() -> None:
    """The first installs the package and runs on the sample with an endpoint set inline (issue 43.2:
    a web run through OpenAI failed for most newcomers); the second is the test command."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode("utf-8")) <= 10 * 1024, "the README is a short page; details go to docs/"
    first_screen = "\n".join(readme.splitlines()[:30])
    commands = re.findall(r"```bash\n(.*?)\n```", readme, re.S)
    assert commands[0] in first_screen and commands[1] in first_screen
    install, run = commands[0].split(" && .venv/bin/pip install -e . && ")
    assert install == "python3.11 -m venv .venv" and run.startswith("OPENAI_BASE_URL=http")
    assert run.endswith(" .venv/bin/research-agent run --sample"), "the first run needs no web and no question"
    # tests/test_sample.py runs that run part, as written, against a fake endpoint on loopback only


def test_the_readme_links_only_to_files_that_exist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    local = [link for link in links if not link.startswith(("http://", "https://"))]
    assert local, "the README links into the documentation"
    assert [link for link in local if not (ROOT / link).is_file()] == []
