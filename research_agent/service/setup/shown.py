"""The settings as a page shows them, without a secret.

:func:`settings_rows` gives what a person asks first of a running server: which models, which
endpoint (its host only: a URL's user, password, path and query may carry a token), the context
window, the search providers, the folders a caller may name, where reports go, the version.
A key is only ever "set" or "not set". :func:`without_secrets` clears any text (a check's
detail, an error) of every key the settings hold and of a URL's user and password, for a page
that shows text it did not write itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from ...config import SECRET_FIELDS, Settings
from ...search.registry import provider_names
from ...version import __version__

__all__ = ["endpoint_host", "settings_rows", "without_secrets", "HIDDEN"]

HIDDEN = "(hidden)"
DEFAULT_ENDPOINT = "api.openai.com"  # where the client goes when no base URL is set
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s]*@")


def endpoint_host(settings: Settings) -> str:
    """The endpoint's host (and port), never its user, password, path or query; "" when none is set."""
    if not settings.base_url:
        return DEFAULT_ENDPOINT if settings.api_key else ""
    try:
        parts = urlsplit(settings.base_url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "(not a URL)"
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}{f':{port}' if port else ''}" if host else "(not a URL)"


def settings_rows(settings: Settings, *, allow_dirs: Sequence[Path], max_runs: int) -> list[tuple[str, str]]:
    """(what, value) for the settings page, in the order a person reads them."""
    keys = [name for name in sorted(SECRET_FIELDS) if getattr(settings, name)]
    window = f"{settings.context_tokens:,} tokens (set)" if settings.context_tokens else \
        "asked of the server at each run (set context_tokens when it does not say)"  # fmt: skip
    rows = [
        ("model", settings.model),
        ("fast model", settings.fast_model_name + ("" if settings.fast_model else " (the model)")),
        ("endpoint", endpoint_host(settings) or "not configured: set OPENAI_API_KEY, or OPENAI_BASE_URL"),
        ("keys", ", ".join(f"{name}: set" for name in keys) if keys else "none set"),
        ("context window", window),
        ("model calls at once", str(settings.llm_concurrency)),
        ("search providers", ", ".join(provider_names(settings))),
        ("allowed folders", ", ".join(str(folder) for folder in allow_dirs) or "none (runs search the web only)"),
        ("research runs at once", str(max_runs)),
        ("reports folder", str(settings.reports_dir)),
        ("private addresses", "fetched" if settings.allow_private else "refused"),
        ("version", __version__),
    ]
    return [(what, without_secrets(value, settings)) for what, value in rows]


def without_secrets(text: str, settings: Settings) -> str:
    """``text`` with every key the settings hold, and any URL's user and password, replaced."""
    for name in SECRET_FIELDS:
        secret = getattr(settings, name)
        if isinstance(secret, str) and len(secret) >= 4:
            text = text.replace(secret, HIDDEN)
    return _USERINFO.sub(r"\1" + HIDDEN + "@", text)
