"""Doctor's checks of the setup, for every front end that runs them (``research-agent doctor``, the
workbench's settings page): each is ``(what, ok, detail)``.

``ok`` is True (ok), False (fail), None (an optional extra that is missing: never a failure),
"slow" (the model did not answer in time: no failure either) or "untried" (a web search provider
such as ddgs, which the checks never send a query: never "ok"). The checks change nothing: no
folder is created (a folder that does not exist yet is checked through its nearest existing
parent). A model the server does not list is tried with a one-token completion, since some
servers (llama.cpp's) list a file path and serve any name; it is waited for as long as
``--llm-timeout`` (a one-slot server busy with another request answers late), and one that does
not answer by then is "slow", never "not served". Each scholarly search provider the settings
name (openalex, arxiv, pubmed, semanticscholar, wikipedia) is asked one small query, unless
``offline`` says not to reach out. No detail holds a key: keys go in headers, never in a line.

httpx is imported when the checks run, not with this module (it costs start-up for every command).
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...config import Settings, default_config_path
from ...version import extra_hint

if TYPE_CHECKING:
    import httpx

__all__ = ["run_checks", "Check", "SLOW", "UNTRIED", "failed"]

# (what, ok / fail / None: an optional extra is missing / "slow": the model did not answer in time, detail)
Check = tuple[str, bool | str | None, str]

# module: (what it is for, the optional extra that installs it, or None when it is required)
_MODULES: dict[str, tuple[str, str | None]] = {
    "trafilatura": ("page and HTML extraction", None),
    "ddgs": ("DuckDuckGo search", None),
    "pypdf": ("PDF files in a corpus", "pdf"),
    "matplotlib": ("memory stats --plot", "plot"),
    "mcp": ("research-agent mcp (the MCP server)", "mcp"),
    "jinja2": ("research-agent serve (the web workbench)", "web"),  # the web extra's one module mcp lacks
}
_SHOWN_NAMES = 5


def _listed(response: Any) -> list[str]:
    try:
        return [str(m.get("id")) for m in response.json().get("data", []) if isinstance(m, dict)]
    except (ValueError, AttributeError):
        return []


SLOW = "slow"  # the status of an endpoint whose model did not answer within --llm-timeout
UNTRIED = "untried"  # the status of what doctor did not try (a web search provider): no failure either
_NOT_TRIED = "doctor sends it no query; the first run that searches the web shows whether it answers"


def _answers(client: httpx.Client, base: str, headers: dict[str, str], model: str, wait: httpx.Timeout) -> str | None:
    """None when ``model`` answers a one-token completion within ``wait`` (a server
    busy with another request answers late, not never), :data:`SLOW` when it did not, else why not."""
    import httpx

    body = {"model": model, "messages": [{"role": "user", "content": "Say OK."}], "max_tokens": 1}
    try:
        response = client.post(f"{base}/chat/completions", json=body, headers=headers, timeout=wait)
    except httpx.TimeoutException:
        return SLOW
    except httpx.HTTPError as exc:
        return f"the completion failed ({exc.__class__.__name__})"
    if response.status_code >= 400:
        return f"a one-token completion got HTTP {response.status_code}"
    return None


def _models(client: httpx.Client, base: str, headers: dict[str, str], settings: Settings, names: list[str]) -> Check:
    """The configured models against the server's list; one it does not list is tried."""
    wanted = sorted({settings.model, settings.fast_model_name})
    listed = ", ".join(names[:_SHOWN_NAMES]) + (f" and {len(names) - _SHOWN_NAMES} more" if len(names) > _SHOWN_NAMES else "")
    unlisted = [m for m in wanted if names and m not in names]
    answers = {m: _answers(client, base, headers, m, _answer_within(client, settings)) for m in unlisted}
    problems = [f"{m}: {why}" for m, why in answers.items() if why not in (None, SLOW)]
    if problems:
        return ("model endpoint", False, f"{base} does not serve {'; '.join(problems)}; it lists: {listed}")
    slow = [m for m, why in answers.items() if why == SLOW]
    if slow:
        return ("model endpoint", SLOW, f"{base} gave no answer to a one-token completion of {', '.join(slow)} within "
                f"{settings.llm_timeout:g}s (--llm-timeout): the server is slow or busy; it lists: {listed}")  # fmt: skip
    detail = f"{base}, model {settings.model}, fast model {settings.fast_model_name}"
    if unlisted:
        detail += f" (not in its list, which names {listed}, but it answered a one-token completion)"
    return ("model endpoint", True, detail)


def _answer_within(client: httpx.Client, settings: Settings) -> httpx.Timeout:
    """The client's limits (``--timeout``), but an answer waited for as long as ``--llm-timeout``."""
    import httpx

    return httpx.Timeout(client.timeout.connect, read=settings.llm_timeout, write=client.timeout.write,
                         pool=client.timeout.pool)  # fmt: skip


def _endpoint(settings: Settings, client: httpx.Client) -> Check:
    import httpx

    if not settings.api_key and not settings.base_url:
        return ("model endpoint", False, "not configured: set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server")
    base = (settings.base_url or "https://api.openai.com/v1").rstrip("/")
    headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
    try:  # connected, a busy one-slot server may answer even its list late: waited for as long as a model call
        response = client.get(f"{base}/models", headers=headers, timeout=_answer_within(client, settings))
    except (httpx.ReadTimeout, httpx.WriteTimeout):
        return ("model endpoint", SLOW, f"{base} took the request but gave no answer to /models within "
                f"{settings.llm_timeout:g}s (--llm-timeout): the server is slow or busy")  # fmt: skip
    except httpx.HTTPError as exc:
        return ("model endpoint", False, f"cannot reach {base}: {exc.__class__.__name__}")
    if response.status_code in (401, 403):
        return ("model endpoint", False, f"{base} refused the key (HTTP {response.status_code})")
    if response.status_code >= 400:
        return ("model endpoint", True, f"{base} answers (HTTP {response.status_code} for /models)")
    return _models(client, base, headers, settings, _listed(response))


def _window(settings: Settings, client: httpx.Client) -> Check:
    """The context window the run will budget its prompts to: what the server says, else the setting."""
    import httpx

    from ...llm.client.window import Heard, settled, window_questions

    said = None
    if settings.base_url:  # a hosted default endpoint is not asked (its windows are far larger)
        headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
        heard = Heard()
        for question in window_questions(settings.base_url, settings.model):
            try:
                response = client.request(question.method, question.url, json=question.body, headers=headers)
            except httpx.HTTPError:
                continue
            said = heard.take(question, response.status_code, response.content[:256 * 1024])
            if said is not None:
                break
        said = said or heard.guess
    window = settled(said, settings.context_tokens)
    if window is None:
        return ("context window", True, "not said by the server; set context_tokens (--context-tokens, "
                "RESEARCH_AGENT_CONTEXT_TOKENS) so that prompts are fitted to it")  # fmt: skip
    detail = f"{window.window:,} tokens ({window.source})"
    if said is not None and said is not window:
        detail += f"; the server says {said.window:,} ({said.source})"
    return ("context window", True, detail)


def _writable(folder: Path) -> Check:
    """Whether research-agent could write in ``folder``, without creating it."""
    what = f"writable {folder}"
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing != folder:
        if existing.is_dir() and os.access(existing, os.W_OK | os.X_OK):
            return (what, True, f"does not exist yet; it will be created in {existing}")
        return (what, False, f"does not exist, and {existing} is not a writable folder")
    if not folder.is_dir():
        return (what, False, "not a folder")
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".doctor-", delete=True):
            pass
    except OSError as exc:
        return (what, False, exc.strerror or str(exc))
    return (what, True, "ok")


def _module(module: str, why: str, extra: str | None) -> Check:
    if importlib.util.find_spec(module) is not None:
        return (module, True, why if extra is None else f"{why} (extra '{extra}')")
    if extra is None:
        return (module, False, f"missing: {why}; reinstall research-agent")
    return (module, None, f"optional extra '{extra}' not installed: {why}; {extra_hint(extra)}")


def run_checks(settings: Settings, *, client: httpx.Client, offline: bool = False, timeout: float = 5.0) -> list[Check]:
    """Every check, in the order the table shows them; ``offline``: no scholarly provider is asked."""
    checks: list[Check] = []
    config = default_config_path()
    checks.append(("config file", True, str(config) if config.is_file() else f"none (looked at {config})"))
    checks.append(_endpoint(settings, client))
    checks.append(_window(settings, client))
    checks.append(_writable(Path(settings.reports_dir)))
    checks.append(_writable(Path(settings.cache_dir)))
    for folder in settings.corpus_dirs:
        ok = folder.is_dir()
        checks.append((f"corpus {folder}", ok, "ok" if ok else "does not exist or is not a folder"))
    checks += _search_checks(settings, offline=offline, timeout=timeout)
    checks += [_module(module, why, extra) for module, (why, extra) in _MODULES.items()]
    return checks


def _search_checks(settings: Settings, *, offline: bool, timeout: float) -> list[Check]:
    """The providers the settings name; each scholarly one asked one small query (not with ``offline``)."""
    from ...errors import ConfigError
    from ...search.registry import provider_names
    from ...search.scholarly import SCHOLARLY_PROVIDERS

    names = provider_names(settings)
    scholarly = [n for n in names if n in SCHOLARLY_PROVIDERS]
    checks: list[Check] = [("search providers", True, "set: " + ", ".join(names))]
    untried = [n for n in names if n != "local" and (offline or n not in SCHOLARLY_PROVIDERS)]
    if untried:  # doctor asks no general web search anything: say so, never "ok" for what it did not try
        why = "--offline" if offline and not set(untried) - set(scholarly) else _NOT_TRIED
        checks.append(("search not tested", UNTRIED, f"{', '.join(untried)}: not tried: {why}"))
    if not scholarly or offline:
        return checks
    from ...interrupts import run_interruptibly
    from ...search.scholarly.build import check_settings

    try:
        check_settings(settings, scholarly)
    except ConfigError as exc:
        return [*checks, ("scholarly search settings", False, str(exc))]
    return checks + run_interruptibly(_probe(settings.replace(fetch_timeout=timeout), scholarly))


async def _probe(settings: Settings, names: list[str]) -> list[Check]:
    import httpx

    from ...search.scholarly.build import probe, scholarly_provider

    async with httpx.AsyncClient(timeout=settings.fetch_timeout) as client:
        return list(await probe([scholarly_provider(name, settings, client) for name in names]))


def failed(checks: list[Check]) -> bool:
    """Whether a check failed (a missing extra or a slow model is no failure)."""
    return any(ok is False for _, ok, _ in checks)
