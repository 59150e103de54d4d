"""The throwaway Postgres cluster removes only the folder it created and marked."""

from __future__ import annotations

from pathlib import Path

from ragloop.safety.owned import mark_folder
from ragloop.serve.cluster import CLUSTER_KIND, LocalCluster


def _cluster_at(root: Path) -> LocalCluster:
    cluster = LocalCluster.__new__(LocalCluster)  # no server binaries needed to stop nothing
    cluster.root, cluster.data = root, root / "data"
    return cluster


def test_stop_leaves_a_folder_it_did_not_mark(tmp_path: Path) -> None:
    user = tmp_path / "mine"
    user.mkdir()
    (user / "notes.txt").write_text("keep me", encoding="utf-8")
    _cluster_at(user).stop()
    assert (user / "notes.txt").read_text(encoding="utf-8") == "keep me"


def test_stop_removes_its_own_marked_folder(tmp_path: Path) -> None:
    own = tmp_path / "ragloop-pg-x"
    own.mkdir()
    mark_folder(own, CLUSTER_KIND)
    (own / "server.log").write_text("log", encoding="utf-8")
    _cluster_at(own).stop()
    assert not own.exists()
