"""Hostile paths and TOML: no user file is deleted or overwritten, nothing written outside."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus"
QA = Path(__file__).parent.parent / "fixtures" / "qa.jsonl"


def _user_folder(root: Path) -> dict[str, bytes]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "notes.md").write_text("# My notes\n\nDo not delete me.", encoding="utf-8")
    (root / "sub").mkdir(exist_ok=True)
    (root / "sub" / "data.bin").write_bytes(b"\x00\x01 precious")
    return _snapshot(root)


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }


def test_index_and_ask_never_replace_a_folder_of_user_files(tmp_path, cli, ledger):
    docs = tmp_path / "docs"
    before = _user_folder(docs)
    (tmp_path / "keep.txt").write_text("mine", encoding="utf-8")
    parent_before = _snapshot(tmp_path)
    attempts = [
        ("index", docs, "--out", docs),  # the corpus itself
        ("index", CORPUS, "--out", docs),  # a folder of user files
        ("index", CORPUS, "--out", ".."),  # the parent
        ("index", CORPUS, "--out", "."),  # the working folder
        ("index", CORPUS, "--out", docs / "notes.md"),  # a file
        ("ask", "q", "--index", docs, "--corpus", CORPUS),  # a folder without a manifest
        ("ask", "q", "--index", docs),
    ]
    failures = 0
    for args in attempts:
        result = cli(*args)
        failures += int(result.exit_code == 0)
        assert result.exit_code != 0, (args, result.output)
        assert "nothing was changed" in result.output or "error:" in result.output
    ledger("hostile paths: --out/--index at user files", len(attempts), failures)
    assert _snapshot(docs) == before
    assert _snapshot(tmp_path) == {**parent_before, **_snapshot(tmp_path)} and all(
        _snapshot(tmp_path)[k] == v for k, v in parent_before.items()
    )


def test_no_silent_fallback_to_the_demo_and_no_folder_made_up(tmp_path, cli, monkeypatch, ledger):
    fresh = cli("ask", "What does error KX-217 mean?")
    assert fresh.exit_code == 1 and "ragloop index PATH" in " ".join(fresh.output.split())
    assert not (tmp_path / ".ragloop" / "index").exists()
    monkeypatch.setenv("RAGLOOP_INDEX_DIR", "/nowhere/idx")
    wrong = cli("ask", "What does error KX-217 mean?", "--corpus", CORPUS)
    assert wrong.exit_code != 0 and not Path("/nowhere").exists()
    monkeypatch.delenv("RAGLOOP_INDEX_DIR")
    no_path = cli("index")
    assert no_path.exit_code == 2 and "--demo" in no_path.output
    demo = cli("index", "--demo", "--out", tmp_path / "idx")
    assert demo.exit_code == 0, demo.output
    ledger("no silent fallback: no index, wrong index path, index without PATH", 3, 0)


def test_replacing_another_corpus_index_needs_force_and_says_what_it_replaced(
    tmp_path, cli, ledger
):
    other = tmp_path / "other"
    other.mkdir()
    (other / "pumps.md").write_text("# Pumps\n\nThe P-40 pump moves 40 litres a minute.")
    idx = tmp_path / "idx"
    assert cli("index", CORPUS, "--out", idx).exit_code == 0
    refused = cli("index", other, "--out", idx)
    assert refused.exit_code == 1 and "--force" in refused.output
    asked = cli("ask", "How fast is the P-40 pump?", "--index", idx, "--corpus", other)
    assert asked.exit_code == 1 and "--force" in asked.output
    forced = cli("index", other, "--out", idx, "--force")
    assert forced.exit_code == 0 and "replaced the index built from another corpus" in " ".join(
        forced.output.split()
    )
    answered = cli("ask", "How fast is the P-40 pump?", "--index", idx)
    out = " ".join(answered.output.split())
    assert answered.exit_code == 0, out
    assert f"answering from: corpus {other}" in out  # said once which corpus it uses
    ledger("replace another corpus's index: refused without --force", 2, 0)


HOSTILE_SPECS = {
    "name escapes the output folder": 'name = "../../../x"',
    "name is absolute": 'name = "/tmp/x"',
    "name holds a control character": 'name = "a\\u001b[2Jb"',
    "out outside the spec and working folders": 'out = "/etc/ragloop-x"',
    "cache_dir outside": 'cache_dir = "../../../../../../tmp/ragloop-cache-x"',
    "not TOML": "name = [unclosed",
    "an unknown key": 'rm_rf = "/"',
    "settings smuggle a path": '[settings]\nindex_dir = "/etc"',
}


@pytest.mark.parametrize("what", sorted(HOSTILE_SPECS))
def test_a_hostile_spec_is_refused_before_any_work(tmp_path, cli, what, ledger):
    spec = tmp_path / "specs" / "spec.toml"
    spec.parent.mkdir()
    base = [
        f"dataset = {json.dumps(str(QA))}",
        f"corpus = {json.dumps(str(CORPUS))}",
        'metrics = ["answer_relevancy"]',
    ]
    spec.write_text(HOSTILE_SPECS[what] + "\n" + "\n".join(base) + "\n", encoding="utf-8")
    if HOSTILE_SPECS[what].startswith("[settings]"):
        spec.write_text("\n".join(base) + "\n" + HOSTILE_SPECS[what] + "\n", encoding="utf-8")
    before = set(os.listdir(tmp_path))
    result = cli("experiment", spec, "-q")
    ok = result.exit_code == 2 and "error:" in result.output
    ledger("hostile TOML specs", 1, int(not ok))
    assert ok, result.output
    assert set(os.listdir(tmp_path)) == before  # nothing created
    assert "[settings]" in result.output or what != "settings smuggle a path"  # not eaten


def test_experiment_out_keeps_the_cache_inside_it(tmp_path, cli, ledger, monkeypatch):
    spec = tmp_path / "spec.toml"
    spec.write_text(
        "\n".join(
            [
                'name = "inside"',
                f"dataset = {json.dumps(str(QA))}",
                f"corpus = {json.dumps(str(CORPUS))}",
                'metrics = ["answer_relevancy"]',
                'cache_dir = "elsewhere-cache"',
                "bootstrap = 100",
                "[settings]",
                'web = "off"',
                "[grid]",
                'retrievers = ["dense"]',
                "max_iterations = [0]",
                "[objective]",
                'maximize = "answer_relevancy"',
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    result = cli("experiment", spec, "--out", tmp_path / "out", "-q")
    assert result.exit_code in (0, 1), result.output
    assert not (tmp_path / "elsewhere-cache").exists()
    assert (tmp_path / "out" / "cache").is_dir() and (tmp_path / "out" / "rows.jsonl").is_file()
    ledger("hostile paths: spec cache_dir with --out", 1, 0)


def test_eval_out_at_an_existing_file_is_refused_and_the_file_kept(tmp_path, cli, ledger):
    target = tmp_path / "report.txt"
    target.write_text("mine", encoding="utf-8")
    data = tmp_path / "qa.jsonl"
    data.write_text(json.dumps({"user_input": "q", "response": "a", "reference": "a"}) + "\n")
    result = cli("eval", data, "--metrics", "exact_match", "--out", target, "-q")
    assert result.exit_code != 0 and target.read_text(encoding="utf-8") == "mine"
    ledger("hostile paths: eval --out at a file", 1, 0)


def test_markup_and_escape_sequences_are_printed_as_text(tmp_path, cli, ledger):
    idx = tmp_path / "idx"
    assert cli("index", CORPUS, "--out", idx).exit_code == 0
    attempts = 0
    for question in (
        "what is [/x]?",
        're.match("([abc])+") [bold]x[/bold]',
        "\x1b[2J\x1b]0;pwn\x07hi",
    ):
        result = cli("ask", question, "--index", idx)
        attempts += 1
        assert result.exit_code == 0, result.output
        assert "\x1b" not in result.output and "\x07" not in result.output
        if question.startswith("\x1b"):
            assert "\\x1b[2J" in result.output  # shown, not obeyed
        else:
            assert question.split()[0] in result.output
    assert "[/x]" in cli("ask", "what is [/x]?", "--index", idx).output
    assert "([abc])+" in cli("ask", 're.match("([abc])+")', "--index", idx).output
    ledger("terminal: markup and escape sequences shown as text", attempts + 2, 0)
