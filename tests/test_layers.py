"""The layers hold: imports only point down, checked by import-linter, and eval stands alone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).parent / "lint-imports"
#: what ``import ragloop.eval`` (and its runner, metrics, samples) must not load
ABOVE_EVAL = ("graph", "nodes", "chat", "serve", "experiments", "pipeline", "cli", "retrievers")


def _lint(src: Path, config: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run(
        [str(LINT), "--config", str(config), "--no-cache"],
        capture_output=True,
        text=True,
        env=env,
        cwd=src.parent,
        timeout=300,
    )


def test_import_linter_contracts_are_kept():
    done = _lint(ROOT / "src", ROOT / "pyproject.toml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_an_upward_import_breaks_the_contract(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "ragloop", src / "ragloop")
    schema = src / "ragloop" / "eval" / "schema.py"
    # the kind of import the layers forbid, hidden inside a function as old code did
    schema.write_text(schema.read_text() + "\n\ndef _up():\n    import ragloop.chat.session\n")
    done = _lint(src, ROOT / "pyproject.toml")
    assert done.returncode != 0
    assert "BROKEN" in done.stdout and "ragloop.eval.schema -> ragloop.chat.session" in done.stdout


def _hide_import(src: Path, module: str, target: str) -> None:
    """Append a function that imports ``target`` to ``module``'s file (in the copy at ``src``)."""
    path = src.joinpath(*module.split(".")).with_suffix(".py")
    path.write_text(path.read_text() + f"\n\ndef _back():\n    import {target}\n")


def test_a_cycle_between_siblings_breaks_the_contract(tmp_path):
    # nodes.answer imports nodes.evidence; evidence importing answer back (inside a function,
    # where a cycle used to hide) is no layer violation, but it is a cycle
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "ragloop", src / "ragloop")
    _hide_import(src, "ragloop.nodes.evidence", "ragloop.nodes.answer")
    done = _lint(src, ROOT / "pyproject.toml")
    assert done.returncode != 0
    assert "no two sibling modules import each other, function-local imports included BROKEN" in (
        done.stdout
    )


def test_chat_and_serve_are_ordered_and_testset_is_layered(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "ragloop", src / "ragloop")
    _hide_import(src, "ragloop.chat.traces", "ragloop.serve.graph")  # chat is below serve
    _hide_import(src, "ragloop.testset.llm", "ragloop.testset.generate")  # the old cycle
    done = _lint(src, ROOT / "pyproject.toml")
    assert done.returncode != 0
    assert "ragloop.chat.traces -> ragloop.serve.graph" in done.stdout
    assert "ragloop.testset.llm -> ragloop.testset.generate" in done.stdout


def _cycles(graph: Any) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.find_modules_directly_imported_by(nxt)))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_import_graph_has_no_cycle_at_all():
    """Function-local imports included (grimp reads them): so none of them dodges a cycle,
    and any of them could move to the top of its module without creating one."""
    import grimp

    graph = grimp.build_graph("ragloop")
    assert _cycles(graph) == []
    graph.add_import(importer="ragloop.testset.checks", imported="ragloop.testset.generate")
    (cycle,) = _cycles(graph)  # the check finds one when there is one
    assert {"ragloop.testset.checks", "ragloop.testset.generate"} <= set(cycle)


def test_importing_eval_loads_nothing_of_the_loop_or_the_app():
    code = (
        "import sys, ragloop.eval, ragloop.eval.runner, ragloop.eval.metrics, "
        "ragloop.eval.schema, ragloop.eval.results\n"
        "names = [m for m in sys.modules if m.startswith(('ragloop.', 'langgraph'))]\n"
        "print('\\n'.join(sorted(names)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    loaded = done.stdout.split()
    assert "ragloop.eval.runner" in loaded
    above = [m for m in loaded if m.split(".")[1] in ABOVE_EVAL]
    assert above == [], above
    assert not [m for m in loaded if m.startswith("langgraph")]  # no graph library either
