"""The SDK: ``create_agent_session`` wires one store into the tools, the custom-tool loader
and the tool-choice rule, exactly as the design note does.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from redline.drivers.model.providers import ModelSpecError, create_provider
from redline.drivers.model.providers.base import Provider
from redline.drivers.model.session import RESOLVERS, AgentSession, Resolver
from redline.review.events import EventStream, Notice
from redline.review.session_log import SessionLog, new_session_id
from redline.review.store import PendingActionStore

log = logging.getLogger(__name__)


def create_agent_session(
    cwd: str | Path,
    model: str | Provider,
    *,
    resolver: Resolver | str = "agent",
    custom_tools: Sequence[Any] = (),
    tool_paths: Sequence[str | Path] = (),
    trust: bool = False,
    system_prompt: str | None = None,
    max_turns: int = 50,
    base_url: str | None = None,
    timeout: float = 60.0,
    api_key_env: str | None = None,
    clock: Callable[[], float] | None = None,
    session_id: str | None = None,
    log_session: bool = True,
    watch_plugins: bool = False,
    plugin_timeout: float | None = None,
    source_kind: str = "sdk",
    source_name: str = "",
) -> AgentSession:
    """Open a session on the workspace ``cwd`` with ``model`` (a model string or a Provider).

    Args:
        cwd: the workspace root.
        model: a model string (``openai:MODEL``, ``anthropic:MODEL``, ``scripted:PLAN.json``)
            or a :class:`Provider`.
        resolver: who resolves pending actions: ``agent``, ``human``, ``apply-all`` or
            ``discard-all``.
        custom_tools: tools or tool factories to add (see docs/custom-tools.md).
        tool_paths: plugin files or folders to load.
        trust: load the workspace's own ``.redline/tools/`` for this session.
        system_prompt: replaces the default system prompt.
        max_turns: model turns per run.
        base_url: an OpenAI-compatible server for ``openai:`` models.
        timeout: seconds per model request.
        api_key_env: the environment variable holding the API key (default
            ``OPENAI_API_KEY`` or ``ANTHROPIC_API_KEY``).
        clock: the time source for events and actions (tests).
        session_id: names the session log (default: time and a random suffix).
        log_session: record events under ``.redline/sessions/``.
        watch_plugins: reload plugin files when they change.
        plugin_timeout: seconds each plugin may take to import and build its tools before
            it is reported and skipped (default: ``$REDLINE_PLUGIN_TIMEOUT``, else 10).
        source_kind: who the session's queued actions say pushed them: ``sdk`` (the
            default), ``exec`` for ``redline exec``, ``agent`` for the dashboard's agent.
        source_name: the human name shown with its actions (default: the kind).

    Returns:
        The open session; close it (or use it as a context manager) when done.

    Raises:
        ModelSpecError: a bad model string or plan.
        ProviderError: a provider that cannot start (e.g. a missing API key).
        ValueError: a bad workspace, resolver, ``max_turns`` or plugin timeout.
    """
    root = Path(cwd).expanduser()
    if not root.is_dir():
        raise ValueError(f"workspace {root}: not a folder")
    root = root.resolve()
    if resolver not in RESOLVERS:
        raise ValueError(f"resolver {resolver!r}: expected one of {', '.join(RESOLVERS)}")
    if max_turns < 1:
        raise ValueError("max_turns must be at least 1")
    if plugin_timeout is not None and not plugin_timeout > 0:
        raise ValueError("plugin_timeout must be a positive number of seconds")
    if isinstance(model, str):
        provider = create_provider(
            model, cwd=root, base_url=base_url, timeout=timeout, api_key_env=api_key_env
        )
    elif isinstance(model, Provider):
        provider = model
    else:
        raise ModelSpecError(
            f"model must be a model string or a Provider, not {type(model).__name__}"
        )

    from redline.tools.registry import builtin_tools
    from redline.workspace.journal import ensure_state_dir, recover
    from redline.workspace.queue import QueueError, Source, WorkspaceQueue

    state_dir = ensure_state_dir(root)
    recovery_messages = recover(root)
    clock_fn = clock or time.time
    sid = session_id or new_session_id()
    source = Source.current(source_kind, source_name, sid)
    # Like journal recovery, settle what a crash left in the review queue before anything
    # is pushed (see docs/queue.md, "Crashes").
    queue = WorkspaceQueue(root, reconcile=False)
    try:
        recovery_messages = [*recovery_messages, *queue.reconcile()]
    except QueueError as exc:
        recovery_messages = [*recovery_messages, str(exc)]
    store = PendingActionStore(clock=clock_fn, queue=queue, source=source)
    stream = EventStream(sid, clock=clock_fn)
    session_log = None
    if log_session:
        session_log = SessionLog(
            state_dir / "sessions" / f"{sid}.jsonl",
            {
                "session_id": sid,
                "model": provider.label,
                "cwd": str(root),
                "resolver": resolver,
                # who ran it: `exec --resume` continues only `exec` sessions
                "source": source_kind,
            },
        )
    tools = builtin_tools()
    from redline.rules import RuleSet

    rules = RuleSet(root, trusted=True if trust else None)
    session = AgentSession(
        cwd=root,
        provider=provider,
        tools=tools,
        resolver=resolver,  # type: ignore[arg-type]
        store=store,
        stream=stream,
        system_prompt=system_prompt,
        max_turns=max_turns,
        session_log=session_log,
        rules=rules,
        recovery_messages=recovery_messages,
    )
    try:
        session.watch_queue()  # registers its own stop, which runs before the close below
    except (QueueError, OSError) as exc:
        log.warning("not watching the review queue: %s", exc)
    session.on_close(queue.close)
    try:
        _announce_rules(session, rules)
        session.plugins.load(
            custom_tools=custom_tools,
            tool_paths=tool_paths,
            trust=trust,
            reserved_names=[tool.name for tool in session.tools],
            timeout=plugin_timeout,
        )
        if watch_plugins:
            session.plugins.start_watching()
    except BaseException:
        session.close()
        raise
    return session


def _announce_rules(session: AgentSession, rules: Any) -> None:
    """Rules-file errors and an ignored workspace rules file reach the activity log."""

    def announce(snapshot: Any) -> None:
        for note in snapshot.notes:
            session.events.emit(Notice(message=f"Review rules: {note}"))

    rules.on_notes_changed(announce)
    rules.snapshot()


__all__ = ["AgentSession", "create_agent_session"]
