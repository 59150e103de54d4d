"""Every command in README.md's code blocks runs, in order, in one fresh folder, and measures
something.

The README is parsed, so a section added later is covered without touching this file:

- ``bash``/``sh``/``console`` blocks: each line (``\\`` continuations joined, ``#`` comments
  dropped) is a command. ``[...]`` marks optional parts: a command runs once without them
  and once with all of them, placeholders (``PATH``, ``DIR``, ``ID``, ``"..."``) filled in.
  ``.venv/bin/`` means this interpreter's bin folder; ``make demo`` runs the demo recipe of the
  Makefile; ``make test`` is this suite and is skipped.
- ``python`` blocks run as scripts with REPL semantics (each top-level expression's value is
  printed, as a user typing the block would see it).
- A block that cannot run offline is preceded by ``<!-- no-test: the reason -->`` and listed
  as skipped with that reason.

Commands that name an OpenAI model (``--llm openai:...``) talk to the local fake OpenAI
server; files the README treats as the user's own (``data.csv``, ``data.jsonl``) are written
first. As in the rest of the suite, embeddings are WordLlama (``RAGLOOP_EMBEDDINGS``).
"""

from __future__ import annotations

import ast
import csv
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ragloop.data import KB_DIR
from tests.fakes.fixtures import FAKE_KEY
from tests.fakes.openai_server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BIN = Path(sys.executable).parent
SHELLS = {"bash", "sh", "shell", "console"}
NO_TEST = re.compile(r"<!--\s*no-test:\s*(?P<reason>.+?)\s*-->")
#: placeholders in optional parts and what the test puts there
PLACEHOLDERS = {"PATH": "docs", "DIR": "out/index-dir", "ID": "readme-thread", "...": "KX-217"}
#: a hung subprocess guard, not a speed requirement
HANG_S = 600
CHAT_INPUT = "How do I clear DK-04 on the Kestrel Dock?\nand how long does that take?\nquit\n"
USER_ROWS = [
    {
        "user_input": "What does error KX-217 mean?",
        "response": "KX-217 means the main brush is blocked.",
        "reference": "Error KX-217 means the main brush is blocked by hair or string.",
        "retrieved_contexts": ["KX-217: the main brush is blocked. Remove hair or string."],
    },
    {
        "user_input": "How do I clear DK-04 on the Kestrel Dock?",
        "response": "Unplug the dock and clear the duct behind the cover.",
        "reference": "Unplug the dock, remove the duct cover and clear the duct.",
        "retrieved_contexts": ["Unplug the dock, remove the duct cover with a coin, clear it."],
    },
]


@dataclass(frozen=True)
class Block:
    lang: str
    line: int
    body: str
    skip: str | None


@dataclass(frozen=True)
class Command:
    kind: str  # "shell", "python" or "skip"
    line: int
    argv: tuple[str, ...] = ()
    code: str = ""
    reason: str = ""
    form: str = ""  # "" (no optional parts), "min" or "max"

    @property
    def id(self) -> str:
        words = [Path(self.argv[0]).name, *self.argv[1:2]] if self.argv else [self.kind]
        return f"L{self.line}:{' '.join(words)}" + (f":{self.form}" if self.form else "")


def blocks(text: str) -> list[Block]:
    """Fenced blocks at the start of a line, with the no-test reason written just before."""
    found, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        fence = re.match(r"^```([\w+-]*)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        start, j = i, i + 1
        while j < len(lines) and not re.match(r"^```\s*$", lines[j]):
            j += 1
        before = [ln for ln in lines[:start] if ln.strip()][-1:]
        marker = NO_TEST.search(before[0]) if before else None
        body = "\n".join(lines[start + 1 : j])
        found.append(Block(fence.group(1).lower(), start + 1, body, marker and marker["reason"]))
        i = j + 1
    return found


def _groups(tokens: list[str]) -> list[tuple[bool, list[str]]]:
    """Tokens as (optional?, tokens) runs; ``[`` ... ``]`` may span several tokens."""
    out: list[tuple[bool, list[str]]] = []
    current: list[str] | None = None
    for tok in tokens:
        if current is None and tok.startswith("["):
            current = []
            tok = tok[1:]
        if current is not None:
            closing = tok.endswith("]")
            current.append(tok[:-1] if closing else tok)
            if closing:
                out.append((True, [t for t in current if t]))
                current = None
        else:
            out.append((False, [tok]))
    assert current is None, f"unclosed [ in {tokens}"
    return out


def _fill(tok: str) -> str:
    if tok in PLACEHOLDERS:
        return PLACEHOLDERS[tok]
    assert not re.fullmatch(r"[A-Z]{2,}", tok), f"README placeholder {tok}: add it to PLACEHOLDERS"
    return tok


def shell_commands(block: Block) -> list[Command]:
    """The commands of a shell block: minimal and maximal forms of each line."""
    joined = re.sub(r"\\\n\s*", " ", block.body)
    out = []
    for offset, raw in enumerate(joined.splitlines()):
        tokens = shlex.split(raw, comments=True)
        if not tokens:
            continue
        line = block.line + 1 + offset
        groups = _groups(tokens)
        minimal = [_fill(t) for optional, toks in groups if not optional for t in toks]
        maximal = [_fill(t) for _, toks in groups for t in toks]
        if minimal == maximal:
            out.append(Command("shell", line, tuple(minimal)))
        else:
            out.append(Command("shell", line, tuple(minimal), form="min"))
            out.append(Command("shell", line, tuple(maximal), form="max"))
    return out


def readme_commands(text: str) -> list[Any]:
    """Every command of the README as a pytest param (skipped ones with their reason)."""
    params: list[Any] = []
    for block in blocks(text):
        if block.lang not in SHELLS | {"python", "py"}:
            continue
        if block.skip:
            cmd = Command("skip", block.line, reason=block.skip)
            params.append(pytest.param(cmd, id=cmd.id, marks=pytest.mark.skip(block.skip)))
            continue
        if block.lang in ("python", "py"):
            cmd = Command("python", block.line, code=block.body)
            params.append(pytest.param(cmd, id=cmd.id))
            continue
        for cmd in shell_commands(block):
            if cmd.argv[:2] == ("make", "test"):
                why = "`make test` is this test suite"
                params.append(pytest.param(cmd, id=cmd.id, marks=pytest.mark.skip(why)))
            else:
                params.append(pytest.param(cmd, id=cmd.id))
    return params


def make_recipe(target: str) -> list[list[str]]:
    """The ``$(BIN)/...`` lines of a Makefile target, as argv lists."""
    lines = (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
    start = next(i for i, ln in enumerate(lines) if re.match(rf"^{re.escape(target)}:", ln))
    recipe = []
    for ln in lines[start + 1 :]:
        if not ln.startswith("\t"):
            break
        argv = shlex.split(ln.strip())
        assert argv[0].startswith("$(BIN)/"), f"make {target}: cannot run {ln.strip()!r} here"
        recipe.append([str(BIN / argv[0].removeprefix("$(BIN)/")), *argv[1:]])
    return recipe


def localise(argv: tuple[str, ...]) -> list[str]:
    """``.venv/bin/x`` -> this interpreter's ``x``; repository paths made absolute."""
    out = []
    for tok in argv:
        if tok.startswith(".venv/bin/"):
            tok = str(BIN / tok.removeprefix(".venv/bin/"))
        elif not tok.startswith((".", "-", "/")) and (ROOT / tok).exists() and "/" in tok:
            tok = str(ROOT / tok)
        out.append(tok)
    return out


def python_script(code: str) -> str:
    """The block with every top-level expression's value printed (what a REPL shows)."""
    tree = ast.parse(code)
    body: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.Expr) and not (
            isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "print"
        ):
            call = ast.Call(ast.Name("print", ast.Load()), [ast.Call(
                ast.Name("repr", ast.Load()), [node.value], [])], [])  # fmt: skip
            node = ast.Expr(call)
        body.append(node)
    return ast.unparse(ast.fix_missing_locations(ast.Module(body, [])))


def reply(body: dict[str, Any]) -> Any:
    """The fake model: the graph's and the metrics' prompts in their shapes, chat condensing."""
    from ragloop.nodes.condense import CONDENSE_INSTRUCTION
    from tests.test_graph_llm import respond

    system = body["messages"][0]["content"]
    if system.startswith(CONDENSE_INSTRUCTION):
        return "How long does clearing DK-04 on the Kestrel Dock take?"
    return respond(body)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Any:
    """A fresh folder holding only the user's own files, and the fake OpenAI server."""
    folder = tmp_path_factory.mktemp("readme")
    (folder / "docs").mkdir()  # the user's documents: a copy of the demo base's files
    for doc in KB_DIR.iterdir():
        if doc.is_file():
            (folder / "docs" / doc.name).write_bytes(doc.read_bytes())
    (folder / "data.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in USER_ROWS), encoding="utf-8"
    )
    with (folder / "data.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(list(USER_ROWS[0]))
        for r in USER_ROWS:  # list cells as JSON, as the dataset reader accepts them
            writer.writerow([v if isinstance(v, str) else json.dumps(v) for v in r.values()])
    with FakeOpenAIServer(reply) as server:
        yield folder, server


def environment(argv: list[str], server: FakeOpenAIServer) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("RAGLOOP_", "OPENAI_", "TAVILY_")) or k == "RAGLOOP_EMBEDDINGS"
    }
    env.update({"COLUMNS": "100", "PYTHONPATH": str(ROOT), "NO_COLOR": "1"})
    if any("openai:" in tok for tok in argv):
        env.update(server.env(FAKE_KEY))
    return env


def run(argv: list[str], folder: Path, server: Any, stdin: str | None = None) -> Any:
    proc = subprocess.run(
        argv,
        cwd=folder,
        env=environment(argv, server),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    shown = f"$ {' '.join(argv)}\n[rc {proc.returncode}]\n{proc.stdout}\n{proc.stderr}"
    assert proc.returncode == 0, shown
    return proc, " ".join(proc.stdout.split()), shown


def check_measured(argv: list[str], flat: str, shown: str, folder: Path) -> None:
    """What "measures something" means for each command."""
    sub = argv[1] if len(argv) > 1 else ""
    if Path(argv[0]).name == "jupyter" and sub == "nbconvert":
        notebook = next(t for t in argv if t.endswith(".ipynb"))
        out = folder / argv[argv.index("--output-dir") + 1] / Path(notebook).name
        cells = json.loads(out.read_text(encoding="utf-8"))["cells"]
        ran = [c for c in cells if c["cell_type"] == "code"]
        assert ran and all(c["execution_count"] for c in ran), shown
        assert any(c["outputs"] for c in ran), shown
    elif sub == "index":
        out = argv[argv.index("--out") + 1] if "--out" in argv else ".ragloop/index"
        manifest = json.loads((folder / out / "manifest.json").read_text())
        assert manifest["chunks"] > 0, shown
    elif sub == "ask":
        assert ("stop_reason" if "--json" in argv else "stop") in flat, shown
        # cited (any source number), or said why not
        assert re.search(r"\[\d+\]", flat) or "no_retrieval" in flat, shown
    elif sub == "retrieve":
        assert ".md" in flat, shown
    elif sub == "eval" and "--traces" in argv:
        turns = re.search(r"(\d+) served turn", flat)
        assert turns and int(turns.group(1)) > 0, shown
    elif sub == "eval":
        counts = [(int(a), int(b)) for a, b in re.findall(r"\b(\d+)/(\d+)\b", flat)]
        assert counts and all(a > 0 for a, _ in counts), shown  # every metric measured rows
    elif sub == "chat":
        assert flat.count("A:") == 2 and "(as: " in flat, shown
    else:
        assert flat, shown


@pytest.mark.slow
@pytest.mark.parametrize("command", readme_commands(README.read_text(encoding="utf-8")))
def test_readme_command(command: Command, workspace: Any) -> None:
    folder, server = workspace
    if command.kind == "python":
        script = folder / f"readme_block_{command.line}.py"
        script.write_text(python_script(command.code), encoding="utf-8")
        proc, flat, shown = run([sys.executable, script.name], folder, server)
        assert flat, shown  # the block printed or displayed something
        assert "nan" not in flat.lower().split(), shown
        return
    if command.argv[0] == "make":
        for argv in make_recipe(command.argv[1]):
            proc, flat, shown = run(argv, folder, server)
            check_measured(argv, flat, shown, folder)
        return
    argv = localise(command.argv)
    stdin = CHAT_INPUT if len(argv) > 1 and argv[1] == "chat" else None
    proc, flat, shown = run(argv, folder, server, stdin)
    check_measured(argv, flat, shown, folder)


def test_the_parser_sees_options_placeholders_and_markers():
    text = "\n".join(
        [
            "<!-- no-test: needs a real Qdrant server -->",
            "```python",
            "store = connect()",
            "```",
            "```bash",
            ".venv/bin/ragloop index PATH [--out DIR]   # a comment",
            '.venv/bin/ragloop ask "q?" [--llm openai:m] \\',
            '    [--reference "..."]',
            "```",
            "```toml",
            "a = 1",
            "```",
        ]
    )
    params = readme_commands(text)
    commands = [p.values[0] for p in params]
    assert [c.kind for c in commands] == ["skip", "shell", "shell", "shell", "shell"]
    assert params[0].marks[0].args == ("needs a real Qdrant server",)
    assert commands[1].argv == (".venv/bin/ragloop", "index", "docs")
    assert commands[2].argv == (".venv/bin/ragloop", "index", "docs", "--out", "out/index-dir")
    assert commands[3].argv == (".venv/bin/ragloop", "ask", "q?")
    assert commands[4].argv[3:] == ("--llm", "openai:m", "--reference", "KX-217")
    assert python_script("x = 1\nx + 1\nprint(x)") == "x = 1\nprint(repr(x + 1))\nprint(x)"
