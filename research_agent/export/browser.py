"""Headless Chromium, for printing a page to PDF (and, in tests and bench/, for reading the DOM
it builds and taking a screenshot).

Chromium is found on PATH (or given as a path); nothing is fetched. Every launch is
headless, with a fresh temporary profile (``--user-data-dir``) and the flags that keep it
off the network: no background requests, component updates, sync, QUIC, or host name
resolution at all (the page is a local file that loads nothing). As root, Chromium refuses
to start without ``--no-sandbox``: that flag is passed then, and only then.

Every launch has a time limit (:data:`PDF_TIMEOUT` for a print): Chromium runs in a process
group of its own, and when the limit passes the whole group (its renderer and GPU processes
too) is killed and one line says so.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ..errors import BrowserTimeout, ConfigError, StorageError

__all__ = [
    "BROWSER_NAMES",
    "INSTALL_HINT",
    "PDF_TIMEOUT",
    "BrowserTimeout",
    "find_browser",
    "browser_command",
    "run_browser",
    "print_pdf",
    "dump_dom",
    "screenshot",
]

BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
INSTALL_HINT = "install Chromium (apt install chromium) or give its path with --browser PATH"
_TIMEOUT = 120.0
PDF_TIMEOUT = 60.0  # a report's PDF takes seconds; a page that takes longer is not one it can print

# Off the network: no background traffic, updates, sync, QUIC, and no host name resolves.
_QUIET = (
    "--headless",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--no-default-browser-check",
    "--disable-breakpad",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--metrics-recording-only",
    "--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,"
    "CertificateTransparencyComponentUpdater,AutofillServerCommunication",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--disable-dev-shm-usage",  # containers often have a tiny /dev/shm
    "--hide-scrollbars",
    "--mute-audio",
)


def find_browser(given: Path | None = None) -> Path:
    """The Chromium to run: ``given`` (an executable file), else the first of
    :data:`BROWSER_NAMES` on PATH; ConfigError (exit 2) with what to install otherwise."""
    if given is not None:
        path = Path(given).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return path
        found = shutil.which(str(given))
        if found:
            return Path(found)
        raise ConfigError(f"browser {given}: not an executable file; {INSTALL_HINT}")
    for name in BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return Path(found)
    raise ConfigError(f"PDF export needs a Chromium browser and none was found: {INSTALL_HINT}")


def browser_command(browser: Path, profile: Path, *args: str, euid: int | None = None) -> list[str]:
    """The command line of one headless launch with ``profile`` as its user data folder."""
    root = (os.geteuid() if euid is None else euid) == 0
    return [str(browser), *_QUIET, *(("--no-sandbox",) if root else ()), f"--user-data-dir={profile}", *args]


def run_browser(browser: Path, args: Sequence[str], *, timeout: float = _TIMEOUT, doing: str = "") -> str:
    """Run one headless launch with a temporary profile; its stdout. StorageError when it fails
    or takes longer than ``timeout`` seconds (``doing``: what it was doing, for that message)."""
    with tempfile.TemporaryDirectory(prefix="research-agent-chromium-") as profile:
        command = browser_command(browser, Path(profile), *args)
        try:
            proc = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                start_new_session=True,  # its own process group: a timeout kills its helpers too
            )  # fmt: skip
        except OSError as exc:
            raise StorageError(f"cannot run {browser}: {exc.strerror or exc}") from None
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            raise BrowserTimeout(f"{browser.name} did not finish{doing} within {timeout:g} s; stopped") from None
        finally:
            if proc.poll() is None:  # interrupted (Ctrl-C) while waiting
                _kill_group(proc)
    if proc.returncode != 0:
        lines = [line for line in stderr.splitlines() if line.strip()]
        raise StorageError(f"{browser.name} failed (exit {proc.returncode}): {(lines or ['no message'])[-1][:300]}")
    return stdout


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """Kill ``proc``'s process group and reap it (its pipes closed: a helper that outlived it
    can hold them open)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    proc.wait()


def print_pdf(browser: Path, html: str, *, timeout: float = PDF_TIMEOUT) -> bytes:
    """The page ``html`` printed to PDF by headless Chromium, within ``timeout`` seconds."""
    with tempfile.TemporaryDirectory(prefix="research-agent-pdf-") as folder:
        page, pdf = Path(folder) / "report.html", Path(folder) / "report.pdf"
        page.write_text(html, encoding="utf-8")
        args = ["--no-pdf-header-footer", f"--print-to-pdf={pdf}", page.as_uri()]
        run_browser(browser, args, timeout=timeout, doing=" printing the PDF")
        data = pdf.read_bytes() if pdf.is_file() else b""
    if not data.startswith(b"%PDF"):
        raise StorageError(f"{browser.name} wrote no PDF")
    return data


def dump_dom(browser: Path, page: Path) -> str:
    """The DOM headless Chromium builds from the file ``page``, serialized after it loaded."""
    return run_browser(browser, ["--dump-dom", Path(page).absolute().as_uri()])


def screenshot(browser: Path, page: Path, png: Path, *, width: int = 1100, height: int = 1500) -> Path:
    """A PNG screenshot of the file ``page`` at ``width`` x ``height`` CSS pixels."""
    png = Path(png).absolute()
    run_browser(
        browser, [f"--window-size={width},{height}", f"--screenshot={png}", Path(page).absolute().as_uri()]
    )
    if not png.is_file():
        raise StorageError(f"{browser.name} wrote no screenshot")
    return png
