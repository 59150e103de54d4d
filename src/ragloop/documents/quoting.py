"""Extractive answers that announce code ("... as follows:") quote the code block that follows."""

from __future__ import annotations

import re

from ragloop.text import split_sentences

_QUOTED = re.compile(r"(.+?) \[(\d+)\](?= |$)", re.DOTALL)


def attach_code(answer: str, sources: list[str]) -> str:
    """After each quoted sentence that ends with ':' and is followed by a code block in its
    cited source (``[n]`` is ``sources[n-1]``), put that whole block; other text is unchanged.
    """
    out: list[str] = []
    end = 0
    attached = False
    for match in _QUOTED.finditer(answer):
        piece = answer[end : match.end()]
        out.append(piece.lstrip() if attached else piece)
        end, attached = match.end(), False
        sentence, n = match.group(1).strip(), int(match.group(2))
        if not sentence.endswith(":") or not 1 <= n <= len(sources):
            continue
        units = split_sentences(sources[n - 1])
        for i, unit in enumerate(units[:-1]):
            block = units[i + 1]
            if unit == sentence and block.startswith("```") and block not in answer:
                out.append(f"\n{block}\n")
                attached = True
                break
    rest = answer[end:]
    out.append(rest.lstrip() if attached else rest)
    return "".join(out).rstrip("\n")


def quoted_heading(answer: str, n: int, chunk_text: str) -> str | None:
    """The ``##`` heading of a packed chunk under which the first sentence cited ``[n]`` is."""
    for match in _QUOTED.finditer(answer):
        if int(match.group(2)) != n:
            continue
        at = chunk_text.find(match.group(1).strip().split("\n")[-1][:60])
        if at < 0:
            return None
        line = chunk_text.rfind("\n## ", 0, at)
        return chunk_text[line + 4 : chunk_text.find("\n", line + 4)].strip() if line >= 0 else None
    return None
