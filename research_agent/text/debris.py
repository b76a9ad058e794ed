"""What counts as words, stated by structure: the test a weak model's debris fails.

A small model asked for JSON can echo its schema back (``type``, ``maxItems``, ``] } {``)
as if it were an answer. Such text has no *real words*: words of 3 or more letters that
are not schema vocabulary. The sub-query check (:mod:`research_agent.stages._sub_queries`)
and the report lint (:mod:`research_agent.review.checks.debris`) both read text through
these functions, so a fragment is judged the same way wherever it lands.

Scripts written without spaces (Chinese, Japanese, Thai...) have no word breaks to count
by: a run of two or more of their characters counts as one word per two characters.
"""

from __future__ import annotations

import re

__all__ = [
    "SCHEMA_VOCABULARY",
    "real_words",
    "mostly_punctuation",
    "is_bare_number",
    "is_url",
    "repeats_itself",
    "says_nothing",
    "unescape_markdown",
    "without_urls",
]

# JSON Schema's keywords and type names, and the field names of the tool's own answer schemas:
# the words a model that echoes its schema writes. Compared lower-cased, whole tokens only.
SCHEMA_VOCABULARY = frozenset(
    {
        # JSON Schema keywords
        "type", "items", "properties", "required", "enum", "const", "minitems", "maxitems", "minlength",
        "maxlength", "minimum", "maximum", "exclusiveminimum", "exclusivemaximum", "multipleof", "uniqueitems",
        "additionalproperties", "patternproperties", "additionalitems", "prefixitems", "minproperties",
        "maxproperties", "anyof", "oneof", "allof", "ref", "defs", "definitions", "schema", "nullable",
        # JSON and its usual stand-ins for nothing
        "string", "integer", "number", "boolean", "object", "array", "null", "true", "false", "none",
        "undefined", "nan",
        # the fields of the tool's answer schemas
        "sub_queries", "executive_summary", "key_findings", "heading", "body", "lens", "severity", "claim",
        "reason", "fix", "confidence", "viability", "score", "scores",
    }
)  # fmt: skip

_TOKEN = re.compile(r"\w+")
_LETTER = re.compile(r"[^\W\d_]")
# Scripts written without spaces between words.
_UNSPACED = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
)
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_NUMBER = re.compile(r"[-+±~≈]?(?:\d+(?:[.,:/]\d+)*)(?:st|nd|rd|th|%|x)?", re.I)
_SCHEME_URL = re.compile(r"(?:[a-z][a-z0-9+.-]*://|www\.)\S+", re.I)
_HOST_WITH_PATH = re.compile(r"(?:[a-z0-9-]+\.)+[a-z]{2,}(?::\d+)?/\S*", re.I)
# A link target stops at the next "(" (where another attempt starts): one pass, not one per "](".
# A scheme starts where its run of letters starts: a search from inside "a.a.a..." would rescan it.
_ANY_URL = re.compile(r"\]\([^()]*+\)|(?:(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*+://|www\.)\S+", re.I)
# A bare host: three or more labels, or a generic top-level domain; the top-level domain in lower
# case, so that a name such as ASP.NET is not read as one.
_BARE_HOST = re.compile(r"(?:[A-Za-z0-9-]+\.){2,}[a-z]{2,}|[A-Za-z0-9-]+\.(?:com|org|net|edu|gov)")
# A quoted key of serialized data ("title": or 'maxLength':) names a field; it is not a word.
_QUOTED_KEY = re.compile(r"""(["'])[^"'\n]{0,60}\1\s*:""")


def unescape_markdown(text: str) -> str:
    """``text`` with markdown's backslash escapes undone (``\\_`` -> ``_``)."""
    return _ESCAPE.sub(r"\1", text)


def without_urls(text: str) -> str:
    """``text`` with web addresses and link targets blanked: an address is not a word."""
    return _ANY_URL.sub(lambda m: "]" + " " * (len(m.group(0)) - 1) if m.group(0).startswith("]") else " ", text)


def real_words(text: str, also: frozenset[str] = frozenset()) -> list[str]:
    """The words of 3 or more letters in ``text`` that are not schema vocabulary, in order.

    A token is a run of letters, digits and underscores (so ``maxItems`` and
    ``sub_queries`` are one token each); it counts when it holds 3 or more letters. A
    quoted key of serialized data (``"title":``) is no word. A run of a script without
    spaces counts one word per two of its characters. ``also``: more words (lower case) to
    read as schema vocabulary, such as the values of the answer's own enums.
    """
    words: list[str] = []
    for token in _TOKEN.findall(_QUOTED_KEY.sub(" ", text)):
        if token.isascii():  # the common case, without a regex per token
            letters = len(token) if token.isalpha() else sum(1 for ch in token if ch.isalpha())
            if letters >= 3 and token.lower() not in SCHEMA_VOCABULARY and token.lower() not in also:
                words.append(token)
            continue
        unspaced = len(_UNSPACED.findall(token))
        if unspaced >= 2:
            words.extend([token] * (unspaced // 2))
        elif len(_LETTER.findall(token)) >= 3 and token.lower() not in SCHEMA_VOCABULARY | also:
            words.append(token)
    return words


def says_nothing(text: str, also: frozenset[str] = frozenset()) -> str | None:
    """Why ``text`` is debris, or None: it loops over the same few words, is a bare number, or has
    no real word (:func:`real_words`, web addresses aside; ``also``: more schema vocabulary).

    The one test of debris: the lint's check of a draft's paragraphs and headings
    (:mod:`research_agent.review.checks.debris`), the skeptic's findings and the relevance
    reasons all read text through it.
    """
    text = unescape_markdown(text)
    words = real_words(without_urls(text), also)
    if repeats_itself(words):
        return "repeats the same few words over and over"
    if words:
        return None
    if is_bare_number(text):
        return "is a bare number"
    return "has no word of 3 or more letters (schema vocabulary such as 'type' or 'maxItems' aside)"


_MIN_LOOP_WORDS = 12
_LOOP_SHARE = 0.25


def repeats_itself(text: str | list[str]) -> bool:
    """True for text (or its :func:`real_words`) that loops: 12 or more real words of which a
    quarter or fewer are distinct ("VACUUM reclaims space. VACUUM reclaims space. ..."), or 6
    or more with at most 2 distinct."""
    words = real_words(text) if isinstance(text, str) else text
    distinct = len({w.lower() for w in words})
    if len(words) >= _MIN_LOOP_WORDS and distinct <= _LOOP_SHARE * len(words):
        return True
    return len(words) >= 6 and distinct <= 2


def mostly_punctuation(text: str) -> bool:
    """True when more than half of the non-blank characters are neither letters nor digits."""
    visible = [ch for ch in text if not ch.isspace()]
    if not visible:
        return True
    marks = sum(1 for ch in visible if not ch.isalnum())
    return marks * 2 > len(visible)


def is_bare_number(text: str) -> bool:
    """True for a number alone ("1", "2.", "- 3", "(4)", "12%"), markup and punctuation aside."""
    core = re.sub(r"[\s*_`#>()\[\]{}.,;:!?'\"|-]+", " ", text).strip()
    return bool(core) and all(_NUMBER.fullmatch(part) for part in core.split())


def is_url(text: str) -> bool:
    """True when ``text`` (markup, brackets and trailing punctuation aside) is one web address.

    An address has a scheme (``https://``, ``ftp://``), starts with ``www.``, is a host
    with a path (``docs.example.org/vacuum``), or is a bare host of three or more labels
    or on a generic top-level domain (``example.com``). A name such as ``Node.js`` or
    ``ASP.NET`` is not one.
    """
    core = unescape_markdown(text).strip().strip("*_`\"'“”‘’").strip()
    link = re.fullmatch(r"\[([^\]]*)\]\(([^)\s]*)\)", core)
    if link is not None:  # a link is an address when its text is one, or says nothing else
        return not real_words(link.group(1)) or is_url(link.group(1))
    core = core.strip("<>[]() ").rstrip(".,;:!?")
    if not core or any(ch.isspace() for ch in core):
        return False
    return bool(
        _SCHEME_URL.fullmatch(core) or _HOST_WITH_PATH.fullmatch(core) or _BARE_HOST.fullmatch(core)
    )
