"""What the MCP tools do, without MCP: build a preview, queue it, report on it.

Every propose tool reuses the built-in tools' preview builders (edit, write, ast_edit), so
an action proposed over MCP is the same action the built-in tool would push; it only lands
in the workspace queue with an ``mcp`` source and ``applied_by: "preview"``, so any redline
process on the folder can apply it. Nothing here ever writes a workspace file.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from redline.review.follower import follow
from redline.review.store import PendingAction
from redline.workspace.details import details_to_json
from redline.workspace.queue import (
    ActionDraft,
    QueueError,
    QueueRecord,
    Resolution,
    Source,
    WorkspaceQueue,
    check_id,
)

log = logging.getLogger(__name__)

# Largest `new` / `content` a propose tool accepts, in UTF-8 bytes (see docs/mcp.md).
MAX_CONTENT_BYTES = 5 * 1024 * 1024
DEFAULT_WAIT_SECONDS = 30.0
MAX_WAIT_SECONDS = 50.0
STILL_PENDING = "still pending"


class ProposalError(Exception):
    """Bad input or an unusable queue: the tool answers with an error and queues nothing."""


def _refused(cause: object, prefix: str = "") -> ProposalError:
    text = f"{prefix}{cause}".rstrip().rstrip(".")
    return ProposalError(f"{text}. Nothing was queued.")


@dataclass(frozen=True)
class Outcome:
    """A propose tool's answer: ``text`` for the model, the queued id when one was queued."""

    text: str
    action_id: str | None = None


def _check_text(name: str, value: str) -> None:
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > MAX_CONTENT_BYTES:
        raise ProposalError(
            f"`{name}` is too large: {size} bytes; the limit is {MAX_CONTENT_BYTES} bytes "
            "(5 MiB). Nothing was queued."
        )
    if "\x00" in value:
        raise ProposalError(
            f"`{name}` contains a NUL byte: redline only proposes text files. Nothing was queued."
        )


class Proposals:
    """The propose and review tools of one server process on one workspace."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self.queue = WorkspaceQueue(self.root)
        # One session id per connected client (stdio: one; HTTP: one per MCP session).
        self._sessions: dict[str, str] = {}
        self._lock = threading.Lock()
        self._rules: Any = None  # redline.rules.RuleSet, made on the first push

    def close(self) -> None:
        self.queue.close()

    def session_for(self, connection: str) -> str:
        """The queue session id of one client connection (made on its first call)."""
        with self._lock:
            found = self._sessions.get(connection)
            if found is None:
                found = f"mcp-{uuid.uuid4().hex[:12]}"
                self._sessions[connection] = found
            return found

    # -- propose -------------------------------------------------------------------
    async def propose_edit(
        self,
        client: str,
        session: str,
        path: str,
        old: str,
        new: str,
        revises: str | None = None,
        implicit: bool = True,
    ) -> Outcome:
        from redline.tools.files._common import FileToolError
        from redline.tools.files.edit import EditRequest, build_edit_action

        _check_text("new", new)
        _check_text("old", old)
        try:
            action = await asyncio.to_thread(
                build_edit_action, EditRequest(self.root, path, old, new)
            )
        except FileToolError as exc:
            raise _refused(exc) from None
        return await self._push(action, "mcp:propose_edit", client, session, revises, implicit)

    async def propose_write(
        self,
        client: str,
        session: str,
        path: str,
        content: str,
        revises: str | None = None,
        implicit: bool = True,
    ) -> Outcome:
        from redline.tools.files._common import FileToolError
        from redline.tools.files.write import NothingToWrite, WriteRequest, build_write_action

        _check_text("content", content)
        try:
            action = await asyncio.to_thread(
                build_write_action, WriteRequest(self.root, path, content)
            )
        except FileToolError as exc:
            raise _refused(exc) from None
        except NothingToWrite as exc:
            return Outcome(str(exc))
        return await self._push(action, "mcp:propose_write", client, session, revises, implicit)

    async def ast_edit(
        self,
        client: str,
        session: str,
        ops: list[dict[str, str]],
        path: str | None,
        glob: str | None,
        limit: int | None,
        revises: str | None = None,
        implicit: bool = True,
    ) -> Outcome:
        from pydantic import ValidationError

        from redline.tools.ast_edit.engine import TargetError
        from redline.tools.ast_edit.metavars import PatternError
        from redline.tools.ast_edit.ops import compile_ops
        from redline.tools.ast_edit.report import preview_text
        from redline.tools.ast_edit.tool import AstEditParams, build_action, run_preview
        from redline.workspace.paths import ConfinementError

        try:
            params = AstEditParams.model_validate(
                {"ops": ops, "path": path or ".", "glob": glob, "limit": limit}
            )
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'input'}: {err['msg']}"
                for err in exc.errors()
            )
            raise _refused(problems, "Invalid ast_edit parameters: ") from None
        for op in params.ops:
            _check_text("ops.out", op.out)
        try:
            compile_ops([(op.pat, op.out) for op in params.ops])
            report = await asyncio.to_thread(run_preview, self.root, params)
        except PatternError as exc:
            raise _refused(exc, "Invalid ast_edit operation: ") from None
        except (TargetError, ConfinementError) as exc:
            raise _refused(exc, "Invalid ast_edit path: ") from None
        if not report.files:
            return Outcome(preview_text(report, None) + "\nNothing was queued.")
        action = build_action(self.root, params, report)
        return await self._push(action, "mcp:ast_edit", client, session, revises, implicit)

    async def _push(
        self,
        action: PendingAction,
        tool: str,
        client: str,
        session: str,
        revises: str | None = None,
        implicit: bool = True,
    ) -> Outcome:
        assert action.preview is not None
        source = Source.current("mcp", name=client, session_id=session)
        draft = ActionDraft(
            label=action.label,
            source=source,
            source_tool_name=tool,
            preview=action.preview,
            details=details_to_json(action.details),
            kind=action.kind,
            applied_by="preview",
            applied_text=action.applied_text if action.preview_apply else None,
            revises=revises or None,
            implicit_revision=implicit,
        )
        from redline.workspace.queue.revisions import RevisionError

        try:
            record = await asyncio.to_thread(self.queue.push, draft)
        except RevisionError as exc:
            raise _refused(exc) from None
        except QueueError as exc:
            raise ProposalError(str(exc)) from None
        ruled = await self._apply_rules(record)
        if ruled is None or self._still_pending(record.id):
            # Nobody watching the workspace: the person hears of it (review/unseen.py).
            from redline.review.unseen import tell_if_unseen

            tell_if_unseen(self.root, record.id, record.label, source.canonical)
        if ruled is not None:
            return Outcome(ruled, record.id)
        from redline.workspace.preview import via_lines
        from redline.workspace.realpath import canonical_preview

        # The diff names the real paths (a symlinked folder resolved), as the record does.
        preview = canonical_preview(self.root, action.preview)
        diff = preview.diff().rstrip("\n")
        via = "".join(f" {line}." for line in via_lines(preview.via))
        revision = (
            f" It is revision {record.revision} of {record.revision_of}."
            if record.revision_of
            else ""
        )
        return Outcome(
            f"Queued {record.id} for review: {record.label}.{via}{revision} Nothing has been "
            f"written yet.\n\n{diff}",
            record.id,
        )

    def _still_pending(self, action_id: str) -> bool:
        try:
            return self.queue.get(action_id) is not None
        except QueueError:
            return False

    async def _apply_rules(self, record: QueueRecord) -> str | None:
        """Review rules decide at push (docs/rules.md): the text that replaces the
        ``Queued`` answer, or None when the action waits for a person."""
        from redline.rules import ActionFacts, RuleSet, decide_and_resolve, queue_resolver

        try:
            if self._rules is None:
                self._rules = RuleSet(self.root)
            outcome = await decide_and_resolve(
                self._rules,
                ActionFacts.of_record(record),
                record.id,
                record.label,
                queue_resolver(self.queue),
                preview=self.queue.preview(record),
            )
        except Exception:  # a broken rule never loses the proposal: it waits for review
            log.exception("review rules could not decide %s", record.id)
            return None
        if outcome is None:
            return None
        if outcome.resolved:
            return outcome.text
        return f"{outcome.text}\nQueued {record.id} for review: {record.label}."

    # -- review --------------------------------------------------------------------
    def status(self, session: str, action_id: str | None) -> str:
        try:
            if action_id is None or action_id == "":
                return self._listing(session)
            check_id(action_id)
            record = self.queue.get(action_id)
            if record is not None:
                return with_comments(
                    f"{action_id} pending: {record.label}", self._comments(action_id, "")
                )
            resolution = self.queue.resolution(action_id)
        except QueueError as exc:
            raise ProposalError(str(exc)) from None
        if resolution is None:
            raise ProposalError(f"No pending or recently resolved action {action_id}.")
        return self._decided_text(resolution, result=False)

    def _comments(self, action_id: str, verb: str) -> str:
        """The reviewer's comments on ``action_id`` as the agent reads them ("" for none):
        after a decision as it carries them, while pending as the comments so far."""
        from redline.review.comments import agent_notes, comment_lines, stored

        if verb:
            return agent_notes(self.queue, action_id, verb)
        try:
            return comment_lines(stored(self.queue, action_id))
        except (QueueError, ValueError):
            return ""

    def comments_json(self, action_id: str) -> list[dict[str, Any]]:
        """``action_id``'s comments as ``pending comment --list --json`` lists them."""
        from redline.review.comments import listed
        from redline.workspace.queue import QueueRecord

        try:
            record = self.queue.get(action_id)
            if record is None:
                resolution = self.queue.resolution(action_id)
                if resolution is None or resolution.record is None:
                    return []
                record = QueueRecord.from_dict(resolution.record, action_id)
            return listed(self.queue, action_id, self.queue.preview(record))
        except (QueueError, ValueError):
            return []

    def _decided_text(self, resolution: Resolution, *, result: bool = True) -> str:
        """The outcome line, what the resolver told the model, and the comments."""
        from redline.review.comments import with_notes

        text = outcome_line(resolution)
        # Whatever the resolver told the model (a partial or edited apply included).
        if result and resolution.result_text:
            text += "\n" + resolution.result_text
        if resolution.decision in ("apply", "discard"):
            text = with_notes(text, self._comments(resolution.id, resolution.decision))
        if resolution.decision == "discard":
            text += "\n" + revise_hint(resolution.id)
        return text

    def _listing(self, session: str) -> str:
        records = [r for r in self.queue.list() if r.source.session_id == session]
        if not records:
            return "No pending actions proposed by this client."
        lines = [f"{r.id} pending: {r.label} (+{r.added} -{r.removed})" for r in records]
        lines.append(f"{len(records)} pending (newest first).")
        return "\n".join(lines)

    async def await_review(self, action_id: str, timeout_s: float | None) -> str:
        try:
            check_id(action_id)
        except QueueError as exc:
            raise ProposalError(str(exc)) from None
        timeout = DEFAULT_WAIT_SECONDS if timeout_s is None else float(timeout_s)
        if timeout != timeout or timeout < 0:
            raise ProposalError(f"timeout_s must be between 0 and {MAX_WAIT_SECONDS:g} seconds.")
        timeout = min(timeout, MAX_WAIT_SECONDS)
        loop = asyncio.get_running_loop()
        changed = asyncio.Event()

        def wake() -> None:
            loop.call_soon_threadsafe(changed.set)

        try:
            # The process's one follower of this queue (review.follower): any number of
            # waits share one watcher thread.
            unfollow = await asyncio.to_thread(follow, self.queue, wake)
        except QueueError as exc:
            raise ProposalError(str(exc)) from None
        try:
            deadline = time.monotonic() + timeout
            while True:
                changed.clear()
                found = await asyncio.to_thread(self._settled, action_id)
                if found is not None:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    return STILL_PENDING
                # The watch wakes us; the bounded wait also covers a change it might miss.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), min(left, 2.0))
        finally:
            await asyncio.to_thread(unfollow)

    def _settled(self, action_id: str) -> str | None:
        try:
            resolution = self.queue.resolution(action_id)
            if resolution is not None:
                return self._decided_text(resolution)
            if self.queue.get(action_id) is None:
                # Neither pending nor in the resolved log (a resolution may just be landing).
                resolution = self.queue.resolution(action_id)
                if resolution is not None:
                    return self._settled(action_id)
                raise ProposalError(f"No pending or recently resolved action {action_id}.")
        except QueueError as exc:
            raise ProposalError(str(exc)) from None
        return None


def revise_hint(action_id: str) -> str:
    """What a discard tells the model about revising it."""
    return (
        f'To try again, propose the change anew; revise it with revises="{action_id}" so '
        "the reviewer sees what changed since this one."
    )


def with_comments(text: str, comments: str) -> str:
    return f"{text}\nComments:\n{comments}" if comments else text


def outcome_line(resolution: Resolution) -> str:
    """``<id> <applied|discarded|replaced by <id>>: <label>. Reason: <reason>``."""
    record: dict[str, Any] = resolution.record or {}
    label = str(record.get("label", "")) or resolution.id
    decision = resolution.decision
    reason = resolution.reason
    if decision == "apply":
        state = "applied"
    elif decision == "replaced":
        state = f"replaced by {resolution.replaced_by or 'another action'}"
    elif decision == "removed":
        state = "discarded"
        reason = reason or "removed from the queue"
    else:
        state = "discarded"
    if resolution.rule:
        reason = f"{reason} (rule {resolution.rule})" if reason else f"rule {resolution.rule}"
    return f"{resolution.id} {state}: {label}. Reason: {reason}"
