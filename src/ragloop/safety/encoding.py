"""Bytes to text for files users bring: BOM-detected UTF-8/16/32, BOM-less UTF-16, else UTF-8."""

from __future__ import annotations

import codecs

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def _bomless_utf16(raw: bytes) -> str | None:
    """``le``/``be`` when ``raw`` looks like BOM-less UTF-16 text (mostly ASCII, zeros paired)."""
    sample = raw[:8192]
    if len(sample) < 4 or len(sample) % 2:
        sample = sample[: len(sample) - len(sample) % 2]
    if not sample:
        return None
    even, odd = sample[0::2], sample[1::2]
    for zeros, encoding in ((odd, "utf-16-le"), (even, "utf-16-be")):
        if zeros.count(0) >= 0.6 * len(zeros):
            try:
                text = raw.decode(encoding)
            except UnicodeDecodeError:
                continue
            if text.count("\x00") <= 0.1 * len(text):  # text, perhaps with a stray NUL
                return encoding
    return None


def sniff_encoding(raw: bytes) -> tuple[str | None, int]:
    """(encoding, BOM length) when the bytes say which Unicode encoding they are, else None."""
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            return encoding, len(bom)
    utf16 = _bomless_utf16(raw) if b"\x00" in raw[:8192] else None
    return (utf16, 0) if utf16 else (None, 0)


def decode_bytes(raw: bytes) -> tuple[str, bool]:
    """Text of ``raw`` and whether undecodable bytes were replaced with U+FFFD."""
    encoding, skip = sniff_encoding(raw)
    encoding = encoding or "utf-8"
    text = raw[skip:].decode(encoding, errors="replace")
    return text, "\ufffd" in text and "\ufffd".encode(encoding) not in raw


def clean_text(value: str) -> tuple[str, bool]:
    """``value`` with lone surrogates turned back into bytes and decoded like a file's.

    Python hands undecodable argv bytes over as surrogate escapes, and JSON may carry lone
    ``\\ud800``-style escapes; neither can be encoded, so tokenizers and terminals fail on
    them. They become U+FFFD here, as invalid bytes in a file do (``decode_bytes``);
    the flag says whether anything was replaced, so the caller can say so once.
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        return value, False
    try:
        raw = value.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:  # surrogates that were never bytes
        raw = value.encode("utf-8", errors="surrogatepass")
    return raw.decode("utf-8", errors="replace"), True
