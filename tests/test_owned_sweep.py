"""Sweeping leftovers beside an index never removes a folder ragloop did not make."""

import contextlib

from ragloop.safety.owned import MARKER, mark_folder, new_build_folder, replace_folder


def test_replace_sweeps_its_leftovers_but_not_a_users_lookalike(tmp_path):
    target = tmp_path / "index"
    user = tmp_path / ".index.old-mine"  # a user's folder that only looks like a leftover
    user.mkdir()
    (user / "notes.txt").write_text("keep me", encoding="utf-8")
    leftover = tmp_path / ".index.old-deadbeef"  # what a killed swap leaves: a marked index
    leftover.mkdir()
    (leftover / "manifest.json").write_text("{}", encoding="utf-8")
    mark_folder(leftover, "index")

    built = new_build_folder(target)
    (built / "manifest.json").write_text("{}", encoding="utf-8")
    replace_folder(built, target, "index")

    assert (target / "manifest.json").exists()
    assert (user / "notes.txt").read_text(encoding="utf-8") == "keep me"
    assert not leftover.exists()


def test_a_build_killed_while_writing_its_marker_is_swept(tmp_path):
    target = tmp_path / "index"
    # what a process killed inside mark_folder leaves: its build folder holding only the
    # marker's temp file (pid 999999 stands for the dead builder)
    dead = tmp_path / ".index.build-999999-abcd"
    dead.mkdir()
    (dead / f".{MARKER}.999999.x1y2.tmp").write_text("{", encoding="utf-8")  # atomic_writer's name
    mine = tmp_path / ".index.build-999999-user"  # a lookalike with a user's file stays
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me", encoding="utf-8")

    built = new_build_folder(target)
    (built / "manifest.json").write_text("{}", encoding="utf-8")
    replace_folder(built, target, "index")

    assert not dead.exists()
    assert (mine / "notes.txt").read_text(encoding="utf-8") == "keep me"


def test_a_lookalike_holding_only_other_ragloop_file_names_is_not_swept(tmp_path):
    """A moved-aside index must be an index: a user's folder of 'results.csv' stays."""
    target = tmp_path / "index"
    user = tmp_path / ".index.old-results"
    user.mkdir()
    (user / "results.csv").write_text("my,own\n1,2\n", encoding="utf-8")
    empty = tmp_path / ".index.old-empty"  # an empty leftover loses nothing
    empty.mkdir()

    built = new_build_folder(target)
    (built / "manifest.json").write_text("{}", encoding="utf-8")
    replace_folder(built, target, "index")

    assert (user / "results.csv").read_text(encoding="utf-8") == "my,own\n1,2\n"
    assert not empty.exists()


class _Killed(BaseException):
    """A kill -9 stands for: nothing after it runs."""


def _index_at(folder):
    (folder / "faiss").mkdir(parents=True)
    (folder / "faiss" / "index.faiss").write_bytes(b"x")
    (folder / "bm25").mkdir()
    for name in ("chunks.jsonl", "vocab.index.json", "params.index.json"):
        (folder / "bm25" / name).write_text("{}", encoding="utf-8")
    (folder / "manifest.json").write_text("{}", encoding="utf-8")
    mark_folder(folder, "index")


def test_a_swap_killed_while_removing_the_old_index_leaves_what_the_next_sweep_removes(
    tmp_path, monkeypatch
):
    # before: the old index went with one shutil.rmtree, which could take its marker and its
    # manifest first; killed then, it left faiss/ and bm25/ that no sweep knew as ragloop's
    import os

    real_unlink, real_rmdir = os.unlink, os.rmdir
    for kill_at in range(8):  # killed when the n-th file or folder is about to go
        target = tmp_path / str(kill_at) / "index"
        _index_at(target)
        built = new_build_folder(target)
        _index_at(built)
        done = [0]

        def dying(real, done=done, kill_at=kill_at):
            def call(*args, **kwargs):
                if done[0] == kill_at:
                    raise _Killed
                done[0] += 1
                return real(*args, **kwargs)

            return call

        monkeypatch.setattr(os, "unlink", dying(real_unlink))
        monkeypatch.setattr(os, "rmdir", dying(real_rmdir))
        with contextlib.suppress(_Killed):
            replace_folder(built, target, "index")
        monkeypatch.setattr(os, "unlink", real_unlink)
        monkeypatch.setattr(os, "rmdir", real_rmdir)
        assert (target / "manifest.json").exists()  # the new index is whole either way
        again = new_build_folder(target)
        _index_at(again)
        replace_folder(again, target, "index")  # the next build sweeps what the kill left
        left = [p.name for p in target.parent.iterdir() if ".old-" in p.name]
        assert left == [], f"killed at removal {kill_at}: {left} would stay forever"
