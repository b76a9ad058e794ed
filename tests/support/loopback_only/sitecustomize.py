"""Refuses every socket outside loopback in the process it is loaded into, and in its children.

Python imports ``sitecustomize`` at start when it is on the path: a test puts this folder on
``PYTHONPATH`` (``tests/test_sample.py``), which the CLI's subprocesses (a detached critique)
inherit. An audit hook sees each name lookup (``socket.getaddrinfo``, ``gethostbyname``...) and
each ``connect``/``sendto``: a host or address that is not loopback is refused with
``PermissionError`` before any packet leaves, and written, one line each, to the file named by
``LOOPBACK_ONLY_LOG``, so a test sees an attempt even when the code under test caught the error.
"""

import ipaddress
import os
import socket
import sys

_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}
_LOOKUPS = {"socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex", "socket.gethostbyaddr",
            "socket.getnameinfo"}  # fmt: skip


def _loopback(host) -> bool:
    if host is None:  # getaddrinfo(None, port): an address to bind to, not a host to reach
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    host = str(host).strip("[]").split("%", 1)[0].lower().rstrip(".")
    if host in _NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _refuse(event: str, target) -> None:
    path = os.environ.get("LOOPBACK_ONLY_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"{os.getpid()} {event} {target!r}\n")
    raise PermissionError(f"loopback only: {event} {target!r} refused")


def _hook(event: str, args: tuple) -> None:
    if event in _LOOKUPS:
        host = args[0][0] if event == "socket.getnameinfo" else args[0]
        if not _loopback(host):
            _refuse(event, host)
    elif event in ("socket.connect", "socket.sendto", "socket.sendmsg"):
        sock, address = args[0], args[-1]
        inet = getattr(sock, "family", None) in (socket.AF_INET, socket.AF_INET6)
        if inet and address is not None and not _loopback(address[0]):
            _refuse(event, address)


sys.addaudithook(_hook)
LOADED = True
