"""What every POST of the workbench checks, what a run form asks for, and how a page names a run.

* A form is read size-capped (:data:`MAX_FORM_BYTES`), urlencoded only, and must carry the
  server's CSRF token (:class:`Csrf`): a page of another site cannot read it, so it cannot
  make a browser act here even where Origin is not sent. A form with a file (a batch's questions)
  is the one multipart form (:func:`read_upload`), capped at :data:`MAX_UPLOAD_BYTES` in all.
* A person's acts (on the lessons, deleting a report) are taken only from a loopback client
  (:func:`from_loopback`): a workbench served off loopback with a bearer token still lets no other
  machine approve or delete.
* :func:`run_call` turns the run options of a form (the ask form's, the batch form's) into the
  settings a run gets: the mode, corpus folders by their place in the ``--allow-dir`` list (never
  a path), search providers, a source limit and the switches of :data:`SWITCHES`.
* A page names a run by a reference (:data:`RUN_REF`: a full run id, a short id or a hex
  prefix, ``latest``, ``latest~N``) that is resolved against the reports folder's listing; a
  path, or anything else, is refused before any file is looked at (:func:`run_ref`). A job of
  this server is named by its own random key (:func:`job_key`).
"""

from __future__ import annotations

import hmac
import ipaddress
import re
import secrets
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from starlette.datastructures import UploadFile
from starlette.requests import Request

from ..config import MODES
from ..errors import InputError, RequestRefused
from ..search.registry import KNOWN_PROVIDERS

__all__ = [
    "MAX_FORM_BYTES", "MAX_UPLOAD_BYTES", "RUN_REF", "JOB_KEY", "SWITCHES", "Csrf", "Form", "Upload", "RequestRefused",
    "read_form", "read_upload", "from_loopback", "run_ref", "job_key", "run_call",
]  # fmt: skip

MAX_FORM_BYTES = 64 * 1024
MAX_UPLOAD_BYTES = 4 * 1024 * 1024  # a questions file: ample for thousands of questions
# (form field, setting turned off, what the form says)
SWITCHES = (
    ("no_critique", "critique", "Skip the critique afterwards"),
    ("no_lessons", "lessons", "Give no lessons to the prompts"),
    ("no_retry", "retry", "No replans or revisions"),
    ("no_claims", "check_claims", "Skip the claim check"),
)
MAX_FIELDS = 100
RUN_REF = re.compile(r"^(?:latest(?:~\d{1,6})?|[0-9a-f]{4,64}|[a-z0-9][a-z0-9-]{0,63}_[0-9]{8}T[0-9]{12}Z)$")
JOB_KEY = re.compile(r"^[0-9a-f]{16}$")


class Csrf:
    """The server's CSRF token: made once per process, put in every form, checked on every POST."""

    def __init__(self, token: str | None = None) -> None:
        self.token = token or secrets.token_urlsafe(32)

    def check(self, given: str) -> None:
        if not given or not hmac.compare_digest(given.encode(), self.token.encode()):
            raise RequestRefused(403, "the form's CSRF token is missing or stale: reload the page and submit it again")


class Form:
    """An urlencoded form's fields: the last value of a name, or all of them."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self.pairs = pairs

    def get(self, name: str, default: str = "") -> str:
        values = self.all(name)
        return values[-1] if values else default

    def all(self, name: str) -> list[str]:
        return [value for key, value in self.pairs if key == name]

    def flag(self, name: str) -> bool:
        return self.get(name) in ("1", "on", "yes")


async def _body(request: Request, limit: int) -> bytes:
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise RequestRefused(413, f"the form is larger than {limit // 1024:,} KiB")
    return bytes(body)


def _kind(request: Request) -> str:
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


async def read_form(request: Request, csrf: Csrf) -> Form:
    """The request's urlencoded form, at most :data:`MAX_FORM_BYTES`, its CSRF token checked."""
    if _kind(request) != "application/x-www-form-urlencoded":
        raise RequestRefused(415, "a form must be sent as application/x-www-form-urlencoded")
    body = await _body(request, MAX_FORM_BYTES)
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=MAX_FIELDS)
    except (UnicodeDecodeError, ValueError):
        raise RequestRefused(400, "the form could not be read (not UTF-8, or too many fields)") from None
    form = Form(pairs)
    csrf.check(form.get("csrf"))
    return form


@dataclass(frozen=True)
class Upload:
    """A file sent with a form: the name the browser gave (never used as a path) and its bytes."""

    name: str
    data: bytes


async def read_upload(request: Request, csrf: Csrf, field: str) -> tuple[Form, Upload | None]:
    """A form that may carry one file in ``field`` (multipart; an urlencoded form is read as
    :func:`read_form` reads it), at most :data:`MAX_UPLOAD_BYTES` in all, its CSRF token checked.
    The file is None when none was chosen (a browser sends an empty part)."""
    if _kind(request) != "multipart/form-data":
        return await read_form(request, csrf), None
    from starlette.formparsers import MultiPartException, MultiPartParser

    body = await _body(request, MAX_UPLOAD_BYTES)

    async def once() -> AsyncGenerator[bytes, None]:
        yield body
        yield b""

    try:
        parsed = await MultiPartParser(request.headers, once(), max_files=1, max_fields=MAX_FIELDS,
                                       max_part_size=MAX_UPLOAD_BYTES).parse()  # fmt: skip
    except MultiPartException as exc:
        raise RequestRefused(400, f"the form could not be read ({exc.message})") from None
    pairs: list[tuple[str, str]] = []
    upload = None
    try:
        for name, value in parsed.multi_items():
            if not isinstance(value, UploadFile):
                pairs.append((name, value))
            elif name == field and (data := await value.read()):
                upload = Upload(value.filename or "", data)
    finally:
        await parsed.close()
    form = Form(pairs)
    csrf.check(form.get("csrf"))
    return form, upload


def from_loopback(request: Request, what: str = "approving, rejecting, adding and trusting lessons") -> None:
    """Refuse (403) a request whose client is not on this machine; ``what``: the act, for the message."""
    host = request.client.host if request.client else ""
    try:
        address = ipaddress.ip_address(host)
        mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
        loopback = (mapped or address).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise RequestRefused(403, f"{what} is allowed only from this machine (a loopback client)")


def run_ref(value: str) -> str:
    """``value`` when it can name a run (:data:`RUN_REF`); InputError otherwise (a path among them)."""
    if not RUN_REF.match(value):
        raise InputError(f"{value[:80]!r} is not a run id: pages name runs by id (or short id), never by path")
    return value


def job_key(value: str) -> str:
    """``value`` when it can name a job of this server; InputError otherwise."""
    if not JOB_KEY.match(value):
        raise InputError(f"{value[:80]!r} is not a run of this server")
    return value


def run_call(form: Form, allowed: Sequence[Path]) -> tuple[dict[str, Any], tuple[tuple[str, str], ...]]:
    """The run settings a submitted form asks for (None: the server's own), and the same in words
    for a page; ``allowed``: the server's ``--allow-dir`` folders, which the form names by place."""
    mode = form.get("mode", "standard")
    if mode not in MODES:
        raise InputError(f"unknown mode {mode[:20]!r}: choose one of {', '.join(MODES)}")
    chosen = list(dict.fromkeys(form.all("corpus")))
    if not all(i.isdigit() and len(i) < 6 and int(i) < len(allowed) for i in chosen):
        raise InputError("choose corpus folders among those listed (the server's --allow-dir folders)")
    folders = [allowed[int(i)] for i in chosen]
    providers = [name for name in dict.fromkeys(form.all("search")) if name]
    unknown = [name for name in providers if name not in KNOWN_PROVIDERS]
    if unknown:
        raise InputError(f"unknown search provider {unknown[0][:30]!r}: choose among {', '.join(KNOWN_PROVIDERS)}")
    text = form.get("max_sources").strip()
    if text and not (text.isdigit() and 1 <= int(text) <= 200):
        raise InputError("max sources must be a whole number from 1 to 200")
    call: dict[str, Any] = {
        "mode": mode, "corpus_dirs": tuple(folders) or None, "search_providers": tuple(providers) or None,
        "max_sources": int(text) if text else None,
        **{setting: False for name, setting, _ in SWITCHES if form.flag(name)},
    }  # fmt: skip
    shown = [("mode", mode)]
    shown += [("corpus", ", ".join(folder.name or str(folder) for folder in folders))] if folders else []
    shown += [("search", ", ".join(providers))] if providers else []
    shown += [("max sources", text)] if text else []
    shown += [("option", label) for name, _, label in SWITCHES if form.flag(name)]
    return call, tuple(shown)
