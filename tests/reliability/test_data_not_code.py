"""Nothing read back from disk runs code: no pickle in an index folder, a crafted one never read."""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import shutil
from pathlib import Path

import pytest

CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus"


class _Evil:
    """Unpickling this runs a shell command that creates the canary file."""

    def __init__(self, canary: Path):
        self.canary = canary

    def __reduce__(self):
        return (os.system, (f"touch {self.canary}",))


@pytest.fixture
def built(tmp_path, cli) -> Path:
    out = tmp_path / "idx"
    result = cli("index", CORPUS, "--out", out)
    assert result.exit_code == 0, result.output
    return out


def test_an_index_folder_holds_no_pickle(built):
    files = [p for p in built.rglob("*") if p.is_file()]
    assert files
    for path in files:
        head = path.read_bytes()[:2]
        # protocol 2+ pickles start with 0x80; no .pkl file, no pickle header anywhere
        assert path.suffix != ".pkl" and not head.startswith(b"\x80"), path


def test_a_crafted_index_pkl_never_runs(tmp_path, built, cli, ledger):
    canary = tmp_path / "canary"
    evil = pickle.dumps(_Evil(canary))
    (built / "faiss" / "index.pkl").write_bytes(evil)  # beside a current index: ignored
    ok = cli("retrieve", "What does error KX-217 mean?", "--index", built)
    assert ok.exit_code == 0, ok.output
    # an older index: manifest format 4, the docstore only as a pickle
    old = tmp_path / "old"
    shutil.copytree(built, old)
    (old / "faiss" / "docstore.json").unlink()
    manifest = json.loads((old / "manifest.json").read_text())
    for fmt in (4, manifest["format"]):  # an old manifest, and a current one lying about it
        (old / "manifest.json").write_text(json.dumps({**manifest, "format": fmt}))
        refused = cli("retrieve", "What does error KX-217 mean?", "--index", old)
        assert refused.exit_code != 0
        assert "rebuild" in refused.output.lower(), refused.output
    asked = cli("ask", "What does error KX-217 mean?", "--index", old)
    assert asked.exit_code != 0
    ledger("data is not code: crafted index.pkl", 4, int(canary.exists()))
    assert not canary.exists()


def test_chat_memory_never_builds_arbitrary_objects(tmp_path):
    """A checkpoint naming ``os.system`` is not called when read back (strict msgpack)."""
    from ragloop.chat.memory import checkpoint_serde

    canary = tmp_path / "canary"
    serde = checkpoint_serde()
    import ormsgpack

    # the extension the permissive serializer turns into ``module.name(arg)``
    payload = ormsgpack.packb(
        ormsgpack.Ext(0, ormsgpack.packb(("os", "system", f"touch {canary}")))
    )
    with contextlib.suppress(Exception):  # refusing is fine; running is not
        serde.loads_typed(("msgpack", payload))
    assert not canary.exists()
