"""What every POST of the workbench checks, and how a page names a run.

* A form is read size-capped (:data:`MAX_FORM_BYTES`), urlencoded only, and must carry the
  server's CSRF token (:class:`Csrf`): a page of another site cannot read it, so it cannot
  make a browser act here even where Origin is not sent.
* A person's acts on the lessons are taken only from a loopback client (:func:`from_loopback`):
  a workbench served off loopback with a bearer token still lets no other machine approve.
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
from urllib.parse import parse_qsl

from starlette.requests import Request

from ..errors import InputError

__all__ = [
    "MAX_FORM_BYTES", "RUN_REF", "JOB_KEY", "Csrf", "Form", "Refused", "read_form", "from_loopback", "run_ref",
    "job_key",
]  # fmt: skip

MAX_FORM_BYTES = 64 * 1024
MAX_FIELDS = 100
RUN_REF = re.compile(r"^(?:latest(?:~\d{1,6})?|[0-9a-f]{4,64}|[a-z0-9][a-z0-9-]{0,63}_[0-9]{8}T[0-9]{12}Z)$")
JOB_KEY = re.compile(r"^[0-9a-f]{16}$")


class Refused(Exception):
    """A request refused before any work: ``status`` and one line for the person."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Csrf:
    """The server's CSRF token: made once per process, put in every form, checked on every POST."""

    def __init__(self, token: str | None = None) -> None:
        self.token = token or secrets.token_urlsafe(32)

    def check(self, given: str) -> None:
        if not given or not hmac.compare_digest(given.encode(), self.token.encode()):
            raise Refused(403, "the form's CSRF token is missing or stale: reload the page and submit it again")


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


async def read_form(request: Request, csrf: Csrf) -> Form:
    """The request's urlencoded form, at most :data:`MAX_FORM_BYTES`, its CSRF token checked."""
    kind = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise Refused(415, "a form must be sent as application/x-www-form-urlencoded")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise Refused(413, f"the form is larger than {MAX_FORM_BYTES // 1024} KiB")
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=MAX_FIELDS)
    except (UnicodeDecodeError, ValueError):
        raise Refused(400, "the form could not be read (not UTF-8, or too many fields)") from None
    form = Form(pairs)
    csrf.check(form.get("csrf"))
    return form


def from_loopback(request: Request) -> None:
    """Refuse (403) a request whose client is not on this machine."""
    host = request.client.host if request.client else ""
    try:
        address = ipaddress.ip_address(host)
        mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
        loopback = (mapped or address).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise Refused(403, "approving, rejecting, adding and trusting lessons is allowed only from this machine "
                           "(a loopback client)")  # fmt: skip


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
