"""kill -9 at each point of a chat turn: no saved turn is left without its trace, none doubled.

A turn's checkpoint is saved before its trace (two stores, no shared transaction): the next
session on the thread writes a trace a kill lost, from the saved state.
"""

from __future__ import annotations

import signal

import pytest

from tests.reliability import workers

POINTS = ("graph", "trace", "after")


def _consistent(db, traces, thread) -> tuple[list[str], list[str]]:
    from ragloop.chat.session import ChatSession
    from ragloop.chat.traces import TraceStore

    store = TraceStore(traces)
    with ChatSession(workers.chat_pipeline(), db, thread_id=thread, traces=store) as session:
        saved = [t.original for t in session.history()]
    traced = [t.original for t in store.turns(thread=thread)]
    return saved, traced


@pytest.mark.parametrize("point", POINTS)
def test_kill_9_at_each_point_of_a_chat_turn(point, tmp_path, procs, ledger):
    db, traces, thread = str(tmp_path / "chat.sqlite"), str(tmp_path / "traces.sqlite"), "t1"
    p = procs.Process(target=workers.chat_turn_killed, args=(db, traces, thread, point))
    p.start()
    p.join(120)
    assert p.exitcode == -signal.SIGKILL
    saved, traced = _consistent(db, traces, thread)
    ok = saved == traced and saved[0] == "question 0"
    ledger("kill -9: chat turn, trace vs checkpoint", 1, int(not ok))
    assert ok, (point, saved, traced)
    assert saved == (["question 0"] if point == "graph" else ["question 0", "question 1"])
    # the next start repairs nothing more: no trace is doubled
    assert _consistent(db, traces, thread) == (saved, traced)
