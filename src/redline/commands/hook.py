"""``redline hook AGENT``: the command an agent's hook runs before and after a tool call.

Reads the agent's hook payload on stdin and answers on stdout (see docs/agents.md). Fails
closed: any problem — a payload redline does not understand, an unusable queue, a crash —
answers with the agent's blocking exit (2) and the cause on stderr. Imports only what the
call needs, so a hook call starts fast (``bench/hooks.py`` measures it).
"""

from __future__ import annotations

import os

from redline.drivers.hooks.values import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse
    from contextlib import AbstractContextManager
    from pathlib import Path

    from redline.drivers.hooks.answers import Rendered
    from redline.drivers.hooks.payload import HookPayload

AGENT_CHOICES = ("claude", "codex", "gemini")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent", metavar="AGENT", help="the agent calling: claude, codex or gemini")


def run(args: argparse.Namespace) -> int:
    return run_agent(str(args.agent))


def run_agent(agent: str, *, exiting: bool = False) -> int:
    """Answer one hook call of ``agent`` (stdin → stdout/stderr); the exit status.

    ``exiting``: the process ends right after (the agent's hook command), so what only a
    clean shutdown needs is skipped."""
    import sys

    from redline.drivers.hooks.answers import blocked
    from redline.hooktrace import mark

    mark("hook started")
    seen: list[HookPayload] = []
    try:
        raw = sys.stdin.buffer.read()
        rendered = handle(agent, raw, exiting=exiting, seen=seen)
    except BaseException as exc:  # fail closed, whatever happened
        if isinstance(exc, KeyboardInterrupt):
            rendered = blocked("interrupted while waiting for review")
        else:
            detail = str(exc)
            rendered = blocked(f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__)
    taken = None
    if seen:  # decisions the agent did not wait for, told once (drivers/hooks/outbox.py)
        from redline.drivers.hooks.outbox import attach

        rendered, taken = attach(seen[0], rendered)
    try:
        if rendered.stdout:
            sys.stdout.write(rendered.stdout)
            sys.stdout.flush()
        if rendered.stderr:
            sys.stderr.write(rendered.stderr)
            sys.stderr.flush()
    except OSError:
        if taken is not None:
            taken.give_back()
        return 2
    mark("answered")
    if taken is not None:
        taken.done()
    return rendered.code


def handle(
    agent: str, raw: bytes, *, exiting: bool = False, seen: list[HookPayload] | None = None
) -> Rendered:
    """The rendered answer to one hook call (exceptions are the caller's: they block).
    ``seen`` gets the parsed payload (the late outcomes are added to the answer with it)."""
    from redline.drivers.hooks.answers import Answer, Rendered, blocked, render, render_post
    from redline.drivers.hooks.payload import AGENTS, PayloadError, parse_payload

    if agent not in AGENTS:
        return blocked(f"unknown agent {agent!r}: expected one of {', '.join(AGENTS)}")
    try:
        payload = parse_payload(agent, raw)
    except PayloadError as exc:
        if _prompt_time(agent, raw):  # it only brings news: never block the person's prompt
            return Rendered("", f"redline: {exc}\n", 1)
        return blocked(str(exc))
    if seen is not None:
        seen.append(payload)
    if payload.is_prompt:  # the prompt-time event only carries late outcomes
        return Rendered("", "", 0)
    from redline.drivers.hooks.tools import reviewed_tool

    reviewed = reviewed_tool(payload)
    if payload.is_pre and reviewed is None:
        return render(agent, payload.event, Answer("pass"))
    from pathlib import Path

    from redline.config import find_workspace_root, hook_settings

    root = find_workspace_root(Path(payload.cwd or "."))
    if payload.is_pre and reviewed == "shell" and not hook_settings(root).review_shell:
        return render(agent, payload.event, Answer("pass"))
    if payload.is_post:
        from redline.drivers.hooks.post_tool import post_tool

        return render_post(agent, payload.event, post_tool(root, payload))
    from redline.drivers.hooks import activity
    from redline.drivers.hooks.gateway import HookCall, HookSettings

    config = hook_settings(root)
    settings = HookSettings(config.wait_seconds, config.review_shell)
    target = activity.target_of(payload)
    activity.record(root, payload, "asked", target=target)
    try:
        with _team_queue(root):
            if agent == "codex":
                import asyncio

                from redline.drivers.hooks.codex import review_patch

                answer = asyncio.run(review_patch(root, payload, settings))
            else:
                call = HookCall(root, payload, settings)
                call.exiting = exiting
                # Queued before asyncio is imported: the agent waits for this part.
                early = call.prepare()
                if early is not None:
                    answer = early
                else:
                    import asyncio

                    # asyncio.run (Ctrl-C cancels the call's task), without its close when the
                    # process ends at the answer (os._exit): cancelling the follower's tasks,
                    # the executor's shutdown and the loop's close only held it back (~0.5 ms).
                    runner = asyncio.Runner()
                    try:
                        answer = runner.run(call.run())
                    finally:
                        if not exiting:
                            runner.close()
    except BaseException as exc:  # the dashboard hears of it too; the caller blocks the call
        cause = str(exc) or type(exc).__name__
        activity.record(root, payload, "answered", target=target, answer="block", reason=cause)
        raise
    activity.record(
        root,
        payload,
        "answered",
        target=target,
        answer=activity.answer_kind(answer),
        reason=answer.reason,
        action=answer.action_id or None,
    )
    return render(agent, payload.event, answer)


def _prompt_time(agent: str, raw: bytes) -> bool:
    """Whether ``raw`` (a payload that was refused) is the agent's prompt-time event."""
    from redline import fastjson
    from redline.drivers.hooks.payload import PROMPT_EVENTS

    try:
        data = fastjson.loads(raw.decode("utf-8"))
    except ValueError:
        return False
    return isinstance(data, dict) and data.get("hook_event_name") == PROMPT_EVENTS.get(agent)


def _team_queue(root: Path) -> AbstractContextManager[object]:
    """The team queue's follower for the length of this call's wait, when one is configured
    for the workspace (docs/team-queue.md): the proposal is mirrored, a decision made
    anywhere is carried out here, and the result is written back before the call answers.

    Without a queue nothing is imported: ``$REDLINE_QUEUE_URL`` and a ``[queue]`` table in
    the user's or the workspace's config are the only ways to set one. A queue problem never
    blocks the call; the local queue and the dashboard keep working.
    """
    from redline.config import ConfigError, read_user_config, read_workspace_config

    wanted = bool(os.environ.get("REDLINE_QUEUE_URL", "").strip())
    try:
        wanted = wanted or "queue" in read_user_config()[0]
        wanted = wanted or "queue" in read_workspace_config(root)[0]
    except ConfigError:
        wanted = False  # the call's own settings already read these files without error
    if not wanted:
        from contextlib import nullcontext

        return nullcontext()
    import logging

    from redline.teamqueue.background import following

    return following(root, log=logging.getLogger("redline.hook.team_queue").info)
