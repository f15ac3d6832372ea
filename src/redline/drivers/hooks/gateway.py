"""One hook call: the tool call becomes a pending action, the answer is the decision.

A pre-tool hook proposes the whole-file change through :class:`ReviewSession` as an
*owner* action of this process (``applied_by="owner"``): while the hook waits, a person's
apply (dashboard, ``redline pending apply``) asks this process, which journals the file's
pre-image and lets the agent write it (``allow``, the input rewritten to the approved
text); a discard becomes a ``deny`` with the reviewer's reason. Rules decide at push, as
for every other source. When no decision comes in ``[hooks] wait_seconds``, the hook
claims the action and hands it over to the queue (``applied_by="preview"``: a later
apply writes it through safe apply), then blocks the call saying it is still pending.
A decision that lands before that claim wins.

A person's edit replaces the action (new id); the hook follows the replacement and, when
it is applied, redline has written the approved text itself (safe apply, journaled): the
agent's call is then blocked with a message saying it was applied as reviewed, with the
diff, so the model knows the file's content.

The post-tool hook records what the agent wrote against the journaled pre-image (so
``redline undo`` reverts it) and says so when it differs from what was approved. A write
as approved is then staged or committed as ``[git] on_apply`` says, like any apply
(:func:`redline.review.provenance.record_agent_write`); a different write is not.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING

from redline.drivers.hooks.answers import Answer
from redline.drivers.hooks.mapping import SHELL_TOOLS, FileChange, MappingError, map_call
from redline.drivers.hooks.payload import HookPayload
from redline.drivers.hooks.values import Value
from redline.hooktrace import mark
from redline.lazylog import LazyLogger

# What a call holds is typed through these; at run time each is imported where it is used,
# so a pass-through call loads none of them and a reviewed one queues its action first.
if TYPE_CHECKING:
    import asyncio

    from redline.jsontypes import JsonObject, JsonValue
    from redline.review.result import ToolResult
    from redline.review.session import PartsServed, ReviewSession
    from redline.review.store import PendingAction
    from redline.rules import RuleOutcome, RuleSet
    from redline.workspace.queue import Resolution, WorkspaceQueue

log = LazyLogger(__name__)  # logging is imported when something is logged

DISCARDED_PREFIX = "Discarded by the reviewer: "
#: Outcomes answered at once (a replacement is followed: it still needs the watcher).
_FINAL = frozenset({"apply", "discard", "parts", "removed"})
NO_REASON = "no reason given"


class HookSettings(Value):
    """``[hooks]``: how long a call waits for a decision; whether shell calls are reviewed."""

    _fields = ("wait_seconds", "review_shell")
    wait_seconds: float
    review_shell: bool

    def __init__(self, wait_seconds: float = 600.0, review_shell: bool = False) -> None:
        self._set(wait_seconds=wait_seconds, review_shell=review_shell)


def discarded(reason: str) -> Answer:
    return Answer("deny", DISCARDED_PREFIX + (reason.strip() or NO_REASON))


def _noted(answer: Answer, queue: WorkspaceQueue | None) -> Answer:
    """The reviewer's comments go with the answer (docs/review-conversation.md): one per
    line after a discard's reason, as ``applied; reviewer notes:`` after an apply."""
    if not answer.action_id or queue is None:
        return answer
    if answer.kind == "allow" or answer.reason.startswith("Applied as reviewed"):
        verb = "apply"
    elif answer.kind == "deny" and answer.reason.startswith(
        (DISCARDED_PREFIX, "Discarded in part")
    ):
        verb = "discard"
    else:
        return answer
    from redline.review.comments import agent_notes, with_notes

    notes = agent_notes(queue, answer.action_id, verb)
    if not notes:
        return answer
    return Answer(
        answer.kind, with_notes(answer.reason, notes), answer.updated_input, answer.action_id
    )


def rewritten_input(payload: HookPayload, change: FileChange, approved: str) -> JsonObject:
    """The tool input that makes the agent write exactly ``approved``."""
    tool_input = dict(payload.tool_input)
    if change.tool in ("Write", "write_file"):
        tool_input["content"] = approved
    elif change.tool == "replace":  # Gemini CLI: the whole file is the text replaced
        tool_input["old_string"] = change.old_text or ""
        tool_input["new_string"] = approved
        tool_input["allow_multiple"] = False
    elif change.tool == "Edit":
        tool_input["old_string"] = change.old_text or ""
        tool_input["new_string"] = approved
        tool_input["replace_all"] = False
    elif change.tool == "MultiEdit":
        tool_input["edits"] = [
            {"old_string": change.old_text or "", "new_string": approved, "replace_all": False}
        ]
    return tool_input


def can_rewrite(change: FileChange) -> bool:
    return change.tool in ("Write", "Edit", "MultiEdit", "write_file", "replace")


class HookCall:
    """One pre-tool hook call waiting for review."""

    def __init__(
        self,
        root: Path,
        payload: HookPayload,
        settings: HookSettings,
        *,
        group: tuple[int, int] | None = None,
    ) -> None:
        self.root = root
        self.payload = payload
        self.settings = settings
        # (n, of): this call's file is the n-th of a patch touching several files.
        self.group = group
        self._decided: asyncio.Future[tuple[str, str, str | None]] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._change: FileChange | None = None
        # The approved text is a person's edit of the proposal.
        self._edited = False
        self._session: ReviewSession | None = None
        self._queue: WorkspaceQueue | None = None
        self._action_id = ""
        self._proposed: PendingAction | None = None
        # A person resolved some hunks (redline wrote them): what happened.
        self._parts: PartsServed | None = None
        # The process ends right after the answer (the agent's hook command): run() leaves
        # the queue's watcher thread to the exit instead of waiting for it to stop.
        self.exiting = False
        # The rules were looked at in prepare() (True), and the RuleSet left for the loop
        # (an apply rule that runs the checks first), if any.
        self._rules_looked = False
        self._rule_set: RuleSet | None = None
        # The decision settled before any event loop existed (a rule's, at push).
        self._early: tuple[str, str, str | None] | None = None

    # -- entry --------------------------------------------------------------------
    def prepare(self) -> Answer | None:
        """Map the call and queue its action, before any event loop exists (the agent waits
        for this part: asyncio is not even imported yet); an Answer when there is nothing
        to review. :meth:`run` then waits for the decision."""
        payload = self.payload
        try:
            change = map_call(self.root, payload)
        except MappingError as exc:
            return Answer("deny", str(exc))
        if change is None:
            if not (self.settings.review_shell and payload.tool_name in SHELL_TOOLS[payload.agent]):
                return Answer("pass")
        elif change.old_text == change.new_text:
            return Answer("allow", f"redline: {change.rel} is unchanged by this call.")
        queue, session = self._open()
        try:
            self._propose(session, queue, change)
            ruled = self._rule_at_push(session, queue)
        except BaseException:
            session.close()
            queue.close()
            raise
        if ruled is not None:  # answered: nothing to wait for
            session.close()
            queue.close()
        return ruled

    async def run(self) -> Answer:
        if self._session is None:
            early = self.prepare()
            if early is not None:
                return early
        session, queue = self._opened()
        try:
            if not await self._started(session):
                follow_queue(session)
                if self.exiting:  # the watch's teardown then never holds up the exit
                    from redline.workspace.queue.watcher import hand_teardown_over

                    hand_teardown_over()
            return await self.finish()
        finally:
            if not self.exiting:  # else the process ends at once: no waiting for the watcher
                session.close()
                queue.close()
            else:  # its doorbell goes with it (done already when a decision settled it)
                self._let_go()

    async def review_change(self, change: FileChange) -> Answer:
        """Propose ``change`` and answer with its decision (one file of a Codex patch)."""
        self._change = change
        return await self._review(change)

    @property
    def change(self) -> FileChange | None:
        """The change as finally approved (a person's edit replaces the proposal)."""
        return self._change

    # -- review -------------------------------------------------------------------
    def _action(self, change: FileChange | None) -> PendingAction:
        from redline.review.store import PendingAction
        from redline.workspace.details import (
            AgentCall,
            CallGroup,
            FileChangeDetails,
            PermissionDetails,
        )
        from redline.workspace.preview import FileCreate, FileDelete, FileModify, Preview

        payload = self.payload
        tool = f"hook:{payload.tool_name}"
        model = payload.raw.get("model")
        call = AgentCall(
            payload.agent,
            payload.tool_name,
            payload.tool_use_id,
            payload.session_id,
            payload.cwd,
            payload.permission_mode,
            # Codex's: Assisted-by for a later apply too
            model.strip() if isinstance(model, str) and model.strip() else None,
        )
        if change is None:
            command = payload.tool_input.get("command") or payload.tool_input.get("url") or ""
            label = f"{payload.tool_name}: {str(command)[:120]}".rstrip(": ")
            return PendingAction(
                label=label,
                apply=self._on_apply,
                reject=self._on_reject,
                details=PermissionDetails(call=call, tool_input=payload.tool_input),
                source_tool_name=tool,
                kind="permission",
            )
        label = f"{payload.tool_name} {change.rel}"
        group = None
        if self.group is not None:
            group = CallGroup(payload.tool_use_id or payload.session_id, *self.group)
            label += f" ({self.group[0]}/{self.group[1]})"
        details = FileChangeDetails(call=call, group=group)
        if change.old_text is None:
            preview = Preview([FileCreate(change.rel, change.new_text)])
        else:
            import hashlib

            old_sha = hashlib.sha256(change.old_text.encode("utf-8")).hexdigest()
            if change.delete:
                preview = Preview([FileDelete(change.rel, old_sha, change.old_text)])
            else:
                preview = Preview(
                    [FileModify(change.rel, old_sha, change.old_text, change.new_text)]
                )
        return PendingAction(
            label=label,
            apply=self._on_apply,
            reject=self._on_reject,
            details=details,
            source_tool_name=tool,
            preview=preview,
            kind="file_change",
            # Picked hunks: redline writes them itself and this call is denied, saying so.
            owner_parts=True,
        )

    def _open(self) -> tuple[WorkspaceQueue, ReviewSession]:
        queue, session = open_session(self.root, self.payload)
        session.on_remote = session.on_removed_elsewhere = self.heard
        session.on_parts = self.heard_parts
        return queue, session

    async def _review(self, change: FileChange | None) -> Answer:
        queue, session = self._open()
        try:
            if not await self.start(session, queue, change):
                follow_queue(session)
            return await self.finish()
        finally:
            session.close()
            queue.close()

    async def start(
        self, session: ReviewSession, queue: WorkspaceQueue, change: FileChange | None
    ) -> bool:
        """Propose ``change`` in ``session`` (several calls may share one: a Codex patch);
        True when a rule decided it already."""
        self._propose(session, queue, change)
        return await self._started(session)

    def _propose(
        self, session: ReviewSession, queue: WorkspaceQueue, change: FileChange | None
    ) -> None:
        self._change = change
        self._session, self._queue = session, queue
        self._proposed = session.propose(self._action(change))
        self._action_id = self._proposed.id
        mark("queued")
        self._note("waiting", action=self._proposed.id)

    async def _started(self, session: ReviewSession) -> bool:
        """The loop's side of a proposal: where decisions land; True when a rule decided."""
        import asyncio

        self._loop = asyncio.get_running_loop()
        self._decided = self._loop.create_future()
        assert self._proposed is not None, "_propose() comes first"
        ruled = await self._rules(session, self._proposed)
        if ruled is None:  # it waits: with no dashboard watching, the person is told
            from redline.review.unseen import tell_if_unseen

            proposed = self._proposed
            tell_if_unseen(self.root, proposed.id, proposed.label, f"hook:{self.payload.agent}")
        return ruled is not None

    def _note(self, event: str, **fields: JsonValue) -> None:
        """A line in the hook activity log the dashboard follows."""
        from redline.drivers.hooks import activity

        change = self._change
        target = change.rel if change is not None else activity.target_of(self.payload)
        activity.record(self.root, self.payload, event, target=target, **fields)

    def _opened(self) -> tuple[ReviewSession, WorkspaceQueue]:
        """The session and queue :meth:`_propose` took (it always runs first)."""
        session, queue = self._session, self._queue
        assert session is not None and queue is not None, "_propose() comes first"
        return session, queue

    def owns(self, action_id: str) -> bool:
        return action_id == self._action_id

    async def finish(self) -> Answer:
        """Wait for the decision (or hand the action over), then the agent's answer."""
        session, queue = self._opened()
        deadline = time.monotonic() + self.settings.wait_seconds
        outcome = await self._wait(session, queue, deadline)
        return _noted(await self._answer(queue, self._action_id, outcome), queue)

    async def _rules(self, session: ReviewSession, action: PendingAction) -> RuleOutcome | None:
        from redline.drivers.hooks.ruled import decide, rule_files_exist

        rules = self._rule_set
        if rules is None and not self._rules_looked:
            if not rule_files_exist(self.root):
                return None  # no rules: the rules engine is not even imported (hook start-up)
            from redline.rules import RuleSet

            rules = RuleSet(self.root)
        if rules is None:
            return None
        return await decide(rules, session, self.payload.agent, action)

    def _rule_at_push(self, session: ReviewSession, queue: WorkspaceQueue) -> Answer | None:
        """A rule's decision on the action just queued, made before any event loop exists
        (drivers/hooks/ruled.py): the answer, or None when it waits for a person (or for
        the checks an apply rule runs first, on the loop)."""
        from redline.drivers.hooks.ruled import (
            NeedsLoop,
            decide,
            rule_files_exist,
            run_now,
            waits_for_checks,
        )

        self._rules_looked = True
        proposed = self._proposed
        if proposed is None or not rule_files_exist(self.root):
            return None
        from redline.rules import RuleSet

        rules = RuleSet(self.root)
        try:
            checks = waits_for_checks(rules, self.payload.agent, proposed)
        except Exception:  # a broken rule never loses the proposal: it waits for review
            log.exception("review rules could not decide %s", proposed.id)
            return None
        if checks:
            self._rule_set = rules
        if checks is None or checks:
            return None
        try:
            run_now(decide(rules, session, self.payload.agent, proposed))
        except NeedsLoop:  # never for the hook's own callbacks: left to a person
            log.exception("a review rule's decision on %s waited", proposed.id)
            return None
        if self._early is None:  # the resolution failed: the action waits for review
            return None
        return _noted(run_now(self._answer(queue, self._action_id, self._early)), queue)

    def _settle(self, verb: str, reason: str, replaced_by: str | None = None) -> None:
        future, loop = self._decided, self._loop
        if future is None or loop is None:  # a rule's decision at push: no loop yet
            self._early = (verb, reason, replaced_by)
            return
        mark(f"settled {verb}")
        if verb in _FINAL and self.exiting:
            self._let_go()

        def done() -> None:
            if not future.done():
                future.set_result((verb, reason, replaced_by))

        if _on_loop(loop):
            done()
        else:
            loop.call_soon_threadsafe(done)

    # The action's own callbacks: run in this process, under the action's claim.
    def _on_apply(self, reason: str) -> ToolResult:
        from redline.review.result import ToolResult

        change = self._change
        if change is not None:
            problem = self._unwritable(change) or self._journal(change)
            if problem is not None:
                return ToolResult.error(problem)
        self._settle("apply", reason)
        name = change.rel if change is not None else self.payload.tool_name
        return ToolResult.text_result(
            f"Allowed {self.payload.agent} to run {self.payload.tool_name} on {name} as reviewed."
        )

    def _unwritable(self, change: FileChange) -> str | None:
        """Why the agent cannot write ``change`` exactly (the apply is refused, the action
        stays pending for another edit or a discard), or None."""
        if self.payload.agent != "codex" or change.delete:
            return None
        from redline.drivers.hooks.codex_patch import expressible

        if expressible(change.new_text):
            return None
        return (
            f"Codex cannot write this version of {change.rel} exactly: apply_patch ends every "
            "file with a newline and writes no carriage returns. Edit it again, or discard it."
        )

    def _let_go(self) -> None:
        """The answer is decided and the process exits once it is given: the queue's watcher
        starts ending now, beside the decision's last writes, rather than at the exit (the
        agent waits for the exit; docs/performance.md)."""
        if self._queue is None:
            return
        from redline.review.follower import QueueFollower

        QueueFollower.of(self._queue).release()

    def _on_reject(self, reason: str) -> None:
        self._settle("discard", reason)
        return None

    def heard(self, _action: PendingAction | None, resolution: Resolution | None) -> None:
        """Another process decided, replaced or removed the action."""
        if resolution is None:
            self._settle("removed", "")
        elif resolution.decision == "replaced" and resolution.replaced_by:
            # Adopted at once, on the loop, before the next sync serves its requests.
            try:
                adopted = self._adopt(resolution.replaced_by)
            except Exception:
                log.exception("could not take in %s", resolution.replaced_by)
                adopted = False
            if not adopted:
                self._settle("replaced", "", resolution.replaced_by)
        elif resolution.decision in ("apply", "discard"):
            self._settle(resolution.decision, resolution.reason)
        else:
            self._settle("removed", resolution.reason)

    def heard_parts(self, _action: PendingAction, served: PartsServed) -> None:
        """A person applied or discarded some hunks (redline wrote them itself)."""
        self._parts = served
        self._settle("parts", served.reason, served.remaining_id or None)

    def _parts_answer(self, action_id: str) -> Answer:
        """The call is denied: redline wrote the picked hunks (or dropped them); the rest
        waits in the queue as a redline-applied action."""
        served = self._parts
        rest = served.remaining_id if served is not None else ""
        reason = served.reason.strip() if served is not None else ""
        why = f" Reason: {reason}" if reason else ""
        if served is not None and served.verb == "apply" and served.written is not None:
            diff = served.written.diff().rstrip("\n")
            if not rest:
                return Answer(
                    "deny",
                    f"Applied as reviewed by redline ({action_id}): redline wrote it itself, so "
                    f"this call is not needed; do not write it again.{why}\n{diff}",
                    action_id=action_id,
                )
            return Answer(
                "deny",
                f"Applied in part as reviewed ({action_id}): {diff}; {rest} holds the rest "
                "(still pending review: redline writes it if a reviewer applies it). redline "
                f"wrote these hunks itself, so this call is not needed; do not write them again."
                f"{why}",
                action_id=action_id,
            )
        if not rest:
            return Answer(**{**discarded(reason).__dict__, "action_id": action_id})
        tail = f"; {rest} holds the rest, still pending review"
        return Answer(
            "deny",
            f"Discarded in part by the reviewer ({action_id}): nothing was written{tail} "
            f"(redline writes it if a reviewer applies it); do not retry the same change.{why}",
            action_id=action_id,
        )

    def _journal(self, change: FileChange) -> str | None:
        """Journal the pre-image before the agent hears "allow"; None, or the problem."""
        from redline.drivers.hooks.mapping import read_text
        from redline.workspace.journal import begin_external

        try:
            current = read_text(self.root / change.rel, change.rel)
        except MappingError as exc:
            return str(exc)
        if current != change.old_text:
            return (
                f"{change.rel} changed on disk since {self.payload.agent} proposed this change; "
                "discard it and let the agent try again."
            )
        import hashlib

        approved: str | None = hashlib.sha256(change.new_text.encode("utf-8")).hexdigest()
        if change.delete:
            approved = None
        try:
            begin_external(
                self.root,
                change.rel,
                label=f"{self.payload.tool_name} {change.rel} ({self.payload.agent})",
                source_tool_name=f"hook:{self.payload.tool_name}",
                approved_sha256=approved,
                action_id=self._action_id or None,
            )
        except Exception as exc:
            return f"Could not journal {change.rel} before the agent writes it: {exc}"
        return None

    def _adopt(self, action_id: str) -> bool:
        """A person edited the action and it stayed ours (``redline pending edit`` of a hook
        action): wait for the edited one, whose approved text is the edit. None when the
        replacement is not ours to wait for (it is followed instead)."""
        from redline.workspace.preview import FileCreate, FileModify

        session, queue = self._session, self._queue
        if session is None or queue is None:
            return False
        record = queue.get(action_id)
        change = self._change
        if (
            record is None
            or change is None
            or record.applied_by != "owner"
            or session.store.source is None
            or record.source.pid != session.store.source.pid
        ):
            return False
        preview = queue.preview(record)
        edited = next(
            (
                c
                for c in (preview.changes if preview is not None else ())
                if isinstance(c, (FileModify, FileCreate)) and c.path == change.rel
            ),
            None,
        )
        if edited is None:
            return False
        self._change = FileChange(change.rel, change.old_text, edited.new_text, change.tool)
        self._edited = True
        action = self._action(self._change)
        session.store.adopt(action.stamped(preview=preview), record)
        self._action_id = record.id
        self._note("waiting", action=record.id, reason="edited by the reviewer")
        return True

    async def _wait(
        self, session: ReviewSession, queue: WorkspaceQueue, deadline: float
    ) -> tuple[str, str, str | None]:
        import asyncio

        assert self._decided is not None
        try:
            return await asyncio.wait_for(
                asyncio.shield(self._decided), timeout=max(0.0, deadline - time.monotonic())
            )
        except TimeoutError:
            pass
        # Serve a request that may have just arrived, then hand the action over.
        with contextlib.suppress(Exception):
            await session.sync()
        if self._decided.done():
            return self._decided.result()
        from redline.workspace.queue import ActionGone, QueueError

        action_id = self._action_id
        try:
            with queue.claim(action_id, wait=2.0) as claim:
                claim.hand_over()
        except ActionGone:
            await asyncio.sleep(0)
            resolution = queue.resolution(action_id)
            if self._decided.done():
                return self._decided.result()
            if resolution is not None:
                self.heard(None, resolution)
                return await self._decided
        except QueueError as exc:
            return ("error", str(exc), None)
        self._note("handed_over", action=action_id)
        return ("timeout", "", None)

    async def _answer(
        self, queue: WorkspaceQueue, action_id: str, outcome: tuple[str, str, str | None]
    ) -> Answer:
        verb, reason, replaced_by = outcome
        if verb == "parts":
            return self._parts_answer(action_id)
        if verb == "apply":
            return self._allow(action_id, reason)
        if verb == "discard":
            return Answer(**{**discarded(reason).__dict__, "action_id": action_id})
        if verb == "replaced" and replaced_by:
            return await self._follow(queue, replaced_by)
        if verb == "timeout":
            return Answer(
                "deny",
                f"Not written yet: the change is still pending review in redline as "
                f"{action_id}. redline writes it if a reviewer applies it later; do not retry "
                "the same change.",
                action_id=action_id,
            )
        if verb == "error":
            return Answer("block", f"redline could not hand {action_id} over: {reason}")
        return Answer(
            "deny",
            f"Removed from redline's review queue ({action_id})"
            + (f": {reason}" if reason else "."),
            action_id=action_id,
        )

    def _allow(self, action_id: str, reason: str) -> Answer:
        change = self._change
        text = "Applied by the reviewer" + (f": {reason}" if reason.strip() else ".")
        if self._edited:
            text = (
                "Applied with the reviewer's edits: the file gets the reviewer's version, "
                "not exactly your proposal." + (f" Reason: {reason}" if reason.strip() else "")
            )
        if change is None or self.payload.agent == "codex":  # codex: the patch is rebuilt
            return Answer("allow", text, action_id=action_id)
        updated = rewritten_input(self.payload, change, change.new_text)
        if not can_rewrite(change) and self._edited:
            return Answer(
                "block",
                f"{change.tool} cannot be rewritten to the reviewer's edit of {change.rel}; "
                f"{action_id} was not written. Propose the change again.",
                action_id=action_id,
            )
        return Answer(
            "allow",
            text,
            updated if can_rewrite(change) else None,
            action_id=action_id,
        )

    async def _follow(self, queue: WorkspaceQueue, action_id: str) -> Answer:
        """Follow a replacement (a person's edit, the rest of a partial decision)."""
        import asyncio

        from redline.review.follower import follow

        loop = asyncio.get_running_loop()
        changed = asyncio.Event()

        def wake() -> None:
            loop.call_soon_threadsafe(changed.set)

        unfollow = follow(queue, wake)
        deadline = time.monotonic() + self.settings.wait_seconds
        try:
            while True:
                changed.clear()
                resolution = queue.resolution(action_id)
                if resolution is not None:
                    if resolution.decision == "replaced" and resolution.replaced_by:
                        action_id = resolution.replaced_by
                        continue
                    if resolution.decision == "apply":
                        return self._applied_by_redline(queue, action_id, resolution)
                    if resolution.decision == "discard":
                        return Answer(
                            **{**discarded(resolution.reason).__dict__, "action_id": action_id}
                        )
                    return Answer("deny", f"Removed from redline's review queue ({action_id}).")
                if queue.get(action_id) is None and queue.resolution(action_id) is None:
                    return Answer("deny", f"{action_id} left redline's review queue.")
                left = deadline - time.monotonic()
                if left <= 0:
                    return Answer(
                        "deny",
                        f"Not written yet: the reviewer's version is still pending in redline "
                        f"as {action_id}. redline writes it if it is applied later.",
                        action_id=action_id,
                    )
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), min(left, 2.0))
        finally:
            unfollow()

    def _applied_by_redline(
        self, queue: WorkspaceQueue, action_id: str, resolution: Resolution
    ) -> Answer:
        from redline.workspace.preview import FileModify, Preview

        change = self._change
        detail = ""
        if change is not None:
            from redline.drivers.hooks.mapping import read_text

            with contextlib.suppress(MappingError):
                now = read_text(self.root / change.rel, change.rel) or ""
                if now != change.new_text:
                    diff = Preview([FileModify(change.rel, "", change.new_text, now)]).diff()
                    detail = (
                        "\nThe reviewer changed your proposal; the file now differs from it:\n"
                        + diff
                    )
        reason = f" Reason: {resolution.reason}" if resolution.reason else ""
        return Answer(
            "deny",
            f"Applied as reviewed by redline ({action_id}): redline wrote the reviewer's "
            f"version itself, so this call is not needed; do not write it again.{reason}" + detail,
            action_id=action_id,
        )


def open_session(root: Path, payload: HookPayload) -> tuple[WorkspaceQueue, ReviewSession]:
    """The workspace queue and a ReviewSession whose actions are this hook process's. The
    queue settles no crash leftovers: readers do (docs/queue.md, "Crashes")."""
    from redline.review.event_stream import EventStream
    from redline.review.session import ReviewSession
    from redline.review.store import PendingActionStore
    from redline.workspace.queue import Source, WorkspaceQueue

    queue = WorkspaceQueue(root, reconcile=False)
    source = Source.current("hook", name=payload.agent, session_id=payload.session_id)
    store = PendingActionStore(queue=queue, source=source)  # its events: none kept (no one hears)
    session = ReviewSession(root, store, EventStream(payload.session_id, replay=False))
    session.via = "hook"
    model = payload.raw.get("model")  # Codex names it in every payload; the others do not
    session.model = model if isinstance(model, str) and model.strip() else None
    return queue, session


def follow_queue(session: ReviewSession) -> None:
    """Follow the queue on the running loop: decisions made elsewhere reach the session."""
    import asyncio

    loop = asyncio.get_running_loop()

    def submit(coro: Coroutine[object, object, None]) -> object:
        return asyncio.run_coroutine_threadsafe(coro, loop)

    session.follow(submit)
    session.prepare_to_serve()  # the action is queued: load the rest while a person reviews
    # What the decision's own path imports where it is used: the reviewer's notes the answer
    # carries, the decisions log and its Assisted-by facts, the late outcomes the answer
    # may carry (nothing is left to import after the decision: pinned by a test).
    import redline.drivers.hooks.outbox
    import redline.review.comments
    import redline.review.trailers
    import redline.workspace.decisions
    import redline.workspace.outbox  # noqa: F401


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    import asyncio

    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False
