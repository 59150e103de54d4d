"""A chat over the graph with memory: a LangGraph checkpointer keyed by thread id (SQLite, or
Postgres with a ``database_url``: ``ragloop.chat.pgmemory``)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage

from ragloop.chat.pgmemory import open_pg_chat_saver, pg_thread_lock
from ragloop.chat.pgtraces import PgTraceStore
from ragloop.chat.traces import TraceStore, redact, trace_from_result
from ragloop.chat.turn_traces import checkpoint_id, repair_trace
from ragloop.errors import ConfigError, RagloopError
from ragloop.graph.result import RunResult
from ragloop.nodes.condense import Condenser, HeuristicCondenser, Turn
from ragloop.nodes.turn import turns_of
from ragloop.state import State, as_messages, is_user, standalone_of

T = TypeVar("T")
StepCallback = Callable[[str, str], None]


def new_thread_id() -> str:
    """A short random thread id the user can pass back with ``--thread``."""
    return uuid.uuid4().hex[:10]


def history_from_state(values: dict[str, Any], finished: bool) -> list[Turn]:
    """The finished turns saved in a thread's state (kept in ``messages`` by the graph)."""
    # ``messages`` holds the earlier turns plus the current user message; the current turn's
    # answer is the state's ``answer`` once the run finished (an interrupted turn is dropped).
    messages = as_messages(values.get("messages"))
    if messages and is_user(messages[-1]):
        current = messages.pop()
        same = standalone_of(current) == values.get("question")
        if finished and same and values.get("answer"):
            messages += [current, AIMessage(content=values["answer"])]
    return turns_of(messages)


def dangling(values: dict[str, Any]) -> list[RemoveMessage]:
    """Removals of the user messages after the last answer (a cancelled or failed turn), so
    the thread's log stays user, assistant, user, assistant."""
    out: list[RemoveMessage] = []
    for message in reversed(as_messages(values.get("messages"))):
        if not is_user(message) or not message.id:
            break
        out.append(RemoveMessage(id=message.id))
    return out


class ChatSession:
    """Turns over a ``Pipeline``'s dependencies with a SQLite checkpointer in ``db_path``, or
    the Postgres one at ``database_url`` (then ``db_path`` is unused and the per-thread lock is
    a Postgres advisory lock, so replicas on other machines take turns too)."""

    # An event loop runs in a background thread (the async SQLite checkpointer is bound to one
    # loop), so the caller stays synchronous and a turn can be cancelled from outside.

    def __init__(
        self,
        pipeline: Any,
        db_path: str | Path,
        *,
        thread_id: str | None = None,
        condenser: Condenser | None = None,
        traces: TraceStore | PgTraceStore | None = None,
        database_url: str | None = None,
    ):
        self.pipeline = pipeline
        self.db_path = Path(db_path)
        self.thread_id = thread_id or new_thread_id()
        self.condenser = condenser or pipeline.deps.condenser or HeuristicCondenser()
        self.traces = traces
        self.database_url = database_url
        self._stack = contextlib.AsyncExitStack()
        self.last: RunResult | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._conn: Any = None
        self._current: asyncio.Task[Any] | None = None
        try:
            self.graph = self.call(self._open())
            if traces is not None:
                self.call(self.arepair())  # the last turn's trace, if a kill -9 lost it
        except BaseException:
            self.close()
            raise

    async def _open(self) -> Any:
        from ragloop.chat.memory import open_sqlite_saver
        from ragloop.graph.builder import build_graph

        if self.database_url:
            saver = await open_pg_chat_saver(self.database_url, self._stack)
            return build_graph(self.pipeline.deps, checkpointer=saver, output_schema=State)
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn, saver = await open_sqlite_saver(self.db_path)
        except Exception as exc:
            raise RagloopError(
                f"cannot open the chat memory {self.db_path}: {exc}; check the data folder "
                "(RAGLOOP_DATA_DIR) is writable"
            ) from None
        return build_graph(self.pipeline.deps, checkpointer=saver, output_schema=State)

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the session's loop; ``future.cancel()`` cancels it."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the session's loop and wait for its result."""
        return self.submit(coro).result()

    @property
    def config(self) -> dict[str, Any]:
        """The LangGraph config that selects this session's thread."""
        return {"configurable": {"thread_id": self.thread_id}}

    def new_thread(self, thread_id: str | None = None) -> str:
        """Start (or switch to) another thread; the old one stays saved."""
        self.thread_id = thread_id or new_thread_id()
        self.last = None
        return self.thread_id

    async def ahistory(self) -> list[Turn]:
        """The finished turns of the current thread, read back from the checkpointer."""
        snapshot = await self.graph.aget_state(self.config)
        return history_from_state(dict(snapshot.values or {}), finished=not snapshot.next)

    def history(self) -> list[Turn]:
        """Sync ``ahistory``."""
        return self.call(self.ahistory())

    async def alast_result(self) -> RunResult | None:
        """The last finished turn of the thread (also after a restart), or None."""
        if self.last is not None:
            return self.last
        snapshot = await self.graph.aget_state(self.config)
        values = dict(snapshot.values or {})
        if snapshot.next or not values.get("answer") or "question" not in values:
            return None
        return RunResult.from_state(values)

    async def aturn(self, text: str, on_step: StepCallback | None = None) -> RunResult:
        """One turn: condense against the history, run the graph, record the trace."""
        self._current = asyncio.current_task()
        original = redact(text.strip())  # a pasted key never reaches the model or the memory
        if not original:
            raise ConfigError("the message is empty: type a question")
        async with self._thread_lock():  # turns of one thread, from any process, one at a time
            await self._repair()  # a turn whose trace a kill lost gets it before the next one
            result = await self._locked_turn(original, on_step)
            if self.traces is not None:  # under the lock: a repair never races this write
                trace = trace_from_result(result, self.thread_id, self.pipeline.model, original)
                trace.checkpoint = await self._checkpoint_id()
                await asyncio.to_thread(self.traces.add, trace)
        self.last = result
        return result

    async def _checkpoint_id(self) -> str:
        return await checkpoint_id(self.graph, self.config)

    async def arepair(self) -> bool:
        """Write the trace of the thread's last saved turn if a kill lost it; True if written."""
        async with self._thread_lock():
            return await self._repair()

    async def _repair(self) -> bool:
        if self.traces is None:
            return False
        return await repair_trace(
            self.graph, self.config, self.traces, self.thread_id, self.pipeline.model
        )

    @contextlib.asynccontextmanager
    async def _thread_lock(self) -> AsyncIterator[None]:
        """The inter-process lock of this thread: read history, run, save happen under it."""
        if self.database_url:  # a file lock holds on one machine only
            async with pg_thread_lock(self.database_url, self.thread_id):
                yield
            return
        import hashlib

        from filelock import FileLock

        name = hashlib.sha256(self.thread_id.encode()).hexdigest()[:16]
        path = self.db_path.parent / f".{self.db_path.name}.thread-{name}.lock"
        lock = FileLock(str(path), thread_local=False)
        while True:  # poll, so a Ctrl-C (task cancel) ends the wait at once
            try:
                lock.acquire(timeout=0)
                break
            except TimeoutError:
                await asyncio.sleep(0.05)
        try:
            yield
        finally:
            lock.release()

    async def _locked_turn(self, original: str, on_step: StepCallback | None) -> RunResult:
        from ragloop.pipeline import CallCounter, run_config

        snapshot = await self.graph.aget_state(self.config)
        values = dict(snapshot.values or {})
        history = history_from_state(values, finished=not snapshot.next)
        if on_step and history:
            on_step("condense", "turning the follow-up into a standalone question")
        question = (await self.condenser.acondense(original, history)).strip() or original
        ctx = self.pipeline.context
        counter = CallCounter()
        config = {**self.config, **run_config(self.pipeline.deps, ctx, counter)}
        user = HumanMessage(content=original, additional_kwargs={"standalone": question})
        inputs = {
            "question": question,
            "reference": None,
            "reference_contexts": [],
            # a cancelled turn's message goes; the thread's log is appended to, never resent
            "messages": [*dangling(values), user],
        }
        started = time.perf_counter()
        final: dict[str, Any] = {}
        async for mode, chunk in self.graph.astream(
            inputs, config, context=ctx, stream_mode=["updates", "values"], durability="exit"
        ):
            if mode == "values":
                final = chunk
            elif on_step:
                for node, update in (chunk or {}).items():
                    steps = (update or {}).get("steps") or [{}]
                    on_step(node, str(steps[-1].get("detail", "")))
        return RunResult.from_state(
            final,
            llm_calls=counter.calls,
            tokens=counter.tokens,
            latency_ms=(time.perf_counter() - started) * 1000,
        )

    def cancel(self, future: concurrent.futures.Future[Any]) -> None:
        """Cancel a submitted turn and wait until it has unwound; the thread keeps its history."""
        future.cancel()
        self.call(self._settle())

    async def _settle(self) -> None:
        task = self._current
        if task is not None and not task.done():
            await asyncio.wait([task], timeout=30)

    def turn(self, text: str, on_step: StepCallback | None = None) -> RunResult:
        """Sync ``aturn``."""
        return self.call(self.aturn(text, on_step))

    def close(self) -> None:
        """Close the checkpointer's connection and stop the loop thread."""
        if self._loop.is_closed():
            return
        if self._conn is not None:
            with contextlib.suppress(Exception):  # closing is best effort
                self.call(self._conn.close())
            self._conn = None
        with contextlib.suppress(Exception):
            self.call(self._stack.aclose())  # the Postgres saver, when there is one
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()

    def __enter__(self) -> ChatSession:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
