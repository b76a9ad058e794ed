"""``research-agent doctor``: check the setup before a long run finds out the hard way.

httpx is imported when the command runs, not with the CLI (it costs start-up for every command).
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from ..config import Settings, default_config_path, load_settings
from .boundary import guarded
from .terminal import markup

if TYPE_CHECKING:
    import httpx

__all__ = ["doctor_command", "run_checks", "Check"]

Check = tuple[str, bool, str]  # (what, ok, detail)


def _endpoint(settings: Settings, client: httpx.Client) -> Check:
    import httpx

    if not settings.api_key and not settings.base_url:
        return ("model endpoint", False, "not configured: set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server")
    base = (settings.base_url or "https://api.openai.com/v1").rstrip("/")
    headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
    try:
        response = client.get(f"{base}/models", headers=headers)
    except httpx.HTTPError as exc:
        return ("model endpoint", False, f"cannot reach {base}: {exc.__class__.__name__}")
    if response.status_code in (401, 403):
        return ("model endpoint", False, f"{base} refused the key (HTTP {response.status_code})")
    if response.status_code >= 400:
        return ("model endpoint", True, f"{base} answers (HTTP {response.status_code} for /models)")
    try:
        names = {m.get("id") for m in response.json().get("data", [])}
    except ValueError:
        names = set()
    missing = [m for m in {settings.model, settings.fast_model_name} if names and m not in names]
    if missing:
        return ("model endpoint", False, f"{base} does not list model(s): {', '.join(sorted(missing))}")
    return ("model endpoint", True, f"{base}, model {settings.model}, fast model {settings.fast_model_name}")


def _writable(folder: Path) -> Check:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".doctor-", delete=True):
            pass
    except OSError as exc:
        return (f"writable {folder}", False, exc.strerror or str(exc))
    return (f"writable {folder}", True, "ok")


def run_checks(settings: Settings, *, client: httpx.Client) -> list[Check]:
    """Every check, in the order the table shows them."""
    checks: list[Check] = []
    config = default_config_path()
    checks.append(("config file", True, str(config) if config.is_file() else f"none (looked at {config})"))
    checks.append(_endpoint(settings, client))
    checks.append(_writable(settings.reports_dir))
    checks.append(_writable(settings.cache_dir))
    for folder in settings.corpus_dirs:
        ok = folder.is_dir()
        checks.append((f"corpus {folder}", ok, "ok" if ok else "does not exist or is not a folder"))
    checks.append(("search providers", True, ", ".join(settings.providers)))
    for module, why in (("trafilatura", "page and HTML extraction"), ("ddgs", "DuckDuckGo search"),
                        ("pypdf", "PDF files (optional extra 'pdf')"), ("matplotlib", "memory stats --plot (optional)")):
        found = importlib.util.find_spec(module) is not None
        optional = "optional" in why
        checks.append((module, found or optional, why if found else f"missing: {why}"))
    return checks


@guarded
def doctor_command(
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds to wait for the endpoint.")] = 5.0,
) -> None:
    """Check settings, the model endpoint, folders and optional extras; exit 1 if something is wrong."""
    import httpx

    console = Console(stderr=False, highlight=False)
    settings = load_settings()
    with httpx.Client(timeout=timeout) as client:
        checks = run_checks(settings, client=client)
    table = Table(show_header=True, header_style="bold")
    table.add_column("check")
    table.add_column("")
    table.add_column("detail")
    for what, ok, detail in checks:
        table.add_row(markup(what), "[green]ok[/green]" if ok else "[red]fail[/red]", markup(detail))
    console.print(table)
    raise typer.Exit(0 if all(ok for _, ok, _ in checks) else 1)
