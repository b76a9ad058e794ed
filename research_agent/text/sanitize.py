"""Make outside text safe to put into a prompt.

Outside text is anything the user's question did not write: web pages, corpus files,
research_context.md, critique YAML. It is cleaned here and then placed between
delimiters that every prompt declares to be data, never instructions.
"""

from __future__ import annotations

import re
import unicodedata

from .controls import one_line

__all__ = [
    "sanitize", "wrap_data", "looks_like_injection", "why_sanitize_changes", "DATA_OPEN", "DATA_CLOSE", "DATA_MARKER",
]

DATA_OPEN = "<<<DATA"
DATA_CLOSE = "<<<END DATA>>>"
# Either delimiter as a model may echo it back: whole, or with its closing brackets cut short.
DATA_MARKER = re.compile(r"<<<[ \t]*+(?:END[ \t]++)?DATA\b[^<>\n]*+>{0,3}", re.IGNORECASE)

# C0/C1 controls except tab and newline, bidi overrides, zero-width characters.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
# Our own delimiters, and the chat-template markers of common model families.
_DELIMITERS = re.compile(
    r"<<<\s*+(?:END\s+)?DATA[^<>]*+>>>|<\|[a-z_]{2,20}\|>|\[/?INST\]|<</?SYS>>|</?(?:system|assistant|user)>",
    re.IGNORECASE,
)
_INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+)?(?:previous|prior|above|earlier|preceding)"
    r"\s+(?:instructions?|prompts?|rules?|directions?|messages?)"
    r"|\byou\s+are\s+now\s+(?:a|an|in)\b"
    r"|\bnew\s+instructions?\s*:"
    r"|\bsystem\s+prompt\s*:"
    r"|\breveal\s+(?:your|the)\s+(?:system\s+)?prompt\b",
    re.IGNORECASE,
)
_BLANK_RUNS = re.compile(r"\n{3,}")
_SPACE_RUNS = re.compile(r"[ \t]{2,}")

INJECTION_PLACEHOLDER = "[instruction-like text removed]"


def looks_like_injection(text: str) -> bool:
    """True when ``text`` carries phrases that try to steer a model."""
    return bool(_INJECTION.search(text or ""))


def sanitize(text: str, *, max_chars: int | None = None, single_line: bool = False) -> str:
    """Return ``text`` normalised, stripped of controls, delimiters and injection phrases."""
    if not text:
        return ""
    text = unicodedata.normalize("NFKC", str(text))
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub("", text)
    text = _DELIMITERS.sub(" ", text)
    text = _INJECTION.sub(INJECTION_PLACEHOLDER, text)
    if single_line:
        text = one_line(text)
    else:
        text = _SPACE_RUNS.sub(" ", text)
        text = _BLANK_RUNS.sub("\n\n", text)
        text = text.strip()
    if max_chars is not None and len(text) > max_chars:
        text = text[: max(0, max_chars - 1)].rstrip() + "…"
    return text


def why_sanitize_changes(text: str) -> str | None:
    """What :func:`sanitize` (one line) would change in ``text``, in words; None when it would
    return ``text`` exactly as it is. Text that must reach a prompt as a person wrote it is
    refused with this reason instead of being cleaned behind their back."""
    if sanitize(text, single_line=True) == text:
        return None
    if _CONTROL.search(text):
        return "contains control or invisible characters"
    if _DELIMITERS.search(text):
        return "contains a data delimiter or chat-template marker (such as <<<DATA or [INST])"
    if _INJECTION.search(text):
        return "contains instruction-like text (such as 'ignore previous instructions')"
    if "\n" in text or "\r" in text:
        return "spans several lines (it must be one line)"
    if unicodedata.normalize("NFKC", text) != text:
        return "contains characters that Unicode normalization (NFKC) would change"
    return "has tabs, or leading, trailing or repeated spaces"


def wrap_data(label: str, text: str) -> str:
    """Put already-sanitized ``text`` between data delimiters named ``label``."""
    label = re.sub(r"[^A-Za-z0-9_ .:\-/\[\]]", "", label)[:80]
    return f"{DATA_OPEN} {label}>>>\n{text}\n{DATA_CLOSE}"
