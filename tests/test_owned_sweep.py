"""Sweeping leftovers beside an index never removes a folder ragloop did not make."""

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
