"""URL normalisation and registrable domains."""

from __future__ import annotations

import subprocess
import sys

import pytest

from research_agent.fetch.urls import is_web_url, normalize_url, registrable_domain, url_host


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("HTTP://WWW.Example.COM/Path", "http://www.example.com/Path"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("https://example.com:8443/a", "https://example.com:8443/a"),
        ("https://example.com/a/#section", "https://example.com/a"),
        ("https://example.com/a/", "https://example.com/a"),
        ("https://example.com", "https://example.com/"),
        ("https://example.com/", "https://example.com/"),
        ("https://example.com//a//b/", "https://example.com/a/b"),
        ("https://example.com/a?b=2&a=1", "https://example.com/a?a=1&b=2"),
        ("https://example.com/a?utm_source=x&utm_medium=y&id=7", "https://example.com/a?id=7"),
        ("https://example.com/a?fbclid=1&gclid=2&msclkid=3&mc_eid=4&_ga=5", "https://example.com/a"),
        ("https://example.com/a?UTM_Campaign=z", "https://example.com/a"),
        ("https://example.com/a?q=", "https://example.com/a?q="),
        ("https://example.com/a%2fb", "https://example.com/a%2Fb"),
        ("https://user:pw@example.com/a", "https://example.com/a"),
        ("https://BÜCHER.de/x", "https://xn--bcher-kva.de/x"),
        ("http://[::1]:80/x/", "http://[::1]/x"),
        ("  https://example.com/a  ", "https://example.com/a"),
    ],
)
def test_normalize_url(url: str, expected: str) -> None:
    assert normalize_url(url) == expected


def test_spellings_of_one_page_share_a_key() -> None:
    spellings = [
        "https://www.example.com/guide/",
        "HTTPS://WWW.EXAMPLE.COM/guide",
        "https://www.example.com:443/guide#intro",
        "https://www.example.com/guide?utm_source=newsletter&utm_medium=email",
        "https://www.example.com/guide/?fbclid=abc",
    ]
    assert len({normalize_url(u) for u in spellings}) == 1


def test_meaningful_differences_are_kept() -> None:
    assert normalize_url("http://x.com/a") != normalize_url("https://x.com/a")
    assert normalize_url("https://x.com/a?page=2") != normalize_url("https://x.com/a?page=3")
    assert normalize_url("https://x.com/A") != normalize_url("https://x.com/a")  # paths are case-sensitive


@pytest.mark.parametrize(
    "text", ["not a url", "", "mailto:a@b.c", "/home/me/notes.md", "http://x.com:99999/"]
)
def test_non_web_strings_are_only_stripped(text: str) -> None:
    assert normalize_url(f" {text} ") == text


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("https://www.x.com/a", "x.com"),
        ("https://blog.x.com", "x.com"),
        ("x.com", "x.com"),
        ("WWW.X.COM", "x.com"),
        ("https://news.bbc.co.uk/story", "bbc.co.uk"),
        ("x.co.uk", "x.co.uk"),
        ("a.b.c.x.co.uk", "x.co.uk"),
        ("https://alice.github.io/page", "alice.github.io"),  # a private suffix: each user is a site
        ("www.x.com:8080", "x.com"),
        ("http://127.0.0.1:8000/a", "127.0.0.1"),
        ("10.1.2.3", "10.1.2.3"),
        ("http://[::1]:8080/", "::1"),
        ("localhost", "localhost"),
        ("http://localhost:3000/x", "localhost"),
        ("co.uk", "co.uk"),
        ("", ""),
    ],
)
def test_registrable_domain(value: str, expected: str) -> None:
    assert registrable_domain(value) == expected


def test_same_site_for_www_and_subdomain() -> None:
    assert registrable_domain("https://www.x.com/a") == registrable_domain("https://blog.x.com/b")
    assert registrable_domain("https://x.co.uk") != registrable_domain("https://y.co.uk")


def test_public_suffix_list_never_touches_the_network() -> None:
    """In a fresh interpreter where every socket refuses to exist, domains still resolve."""
    script = (
        "import socket\n"
        "class NoNet(socket.socket):\n"
        "    def __init__(self, *a, **k):\n"
        "        raise SystemExit('network used')\n"
        "socket.socket = NoNet\n"
        "from research_agent.fetch.urls import registrable_domain\n"
        "print(registrable_domain('deep.sub.example.com.au'), registrable_domain('www.x.co.uk'))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["example.com.au", "x.co.uk"]


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://x.com/a", True),
        ("http://x.com", True),
        ("HTTP://X.COM", True),
        ("ftp://x.com/a", False),
        ("javascript:alert(1)", False),
        ("http://", False),
        ("http://exa mple.com/", False),
        ("http://x.com:99999/", False),
        ("//x.com/a", False),
        ("x.com/a", False),
        ("", False),
    ],
)
def test_is_web_url(url: str, ok: bool) -> None:
    assert is_web_url(url) is ok


def test_url_host() -> None:
    assert url_host("https://User@WWW.X.com:8080/a") == "www.x.com"
    assert url_host("x.com:99") == "x.com"
    assert url_host("http://[::1]/") == "::1"
