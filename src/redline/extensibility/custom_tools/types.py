"""What a custom tool is, what it may use (``CustomToolAPI``), and how the runtime runs it.

A plugin module exports a :data:`CustomToolFactory`: a callable that receives a
:class:`CustomToolAPI` and returns one tool, a list of tools, or an awaitable of either.
A tool is any object (or mapping) with ``name``, ``label``, ``description``, a pydantic
``parameters`` model and ``execute(tool_call_id, params)``; :class:`CustomToolAdapter`
turns it into an ordinary :class:`redline.tools.base.Tool` so the session cannot tell it
from a built-in.
"""

from __future__ import annotations

import contextvars
import inspect
import logging
import re
import subprocess
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, runtime_checkable

from pydantic import BaseModel, ValidationError

from redline.extensibility.isolation import (
    Capture,
    OutputSink,
    PluginCrash,
    await_in_thread,
    await_plugin,
    not_capturing,
    safe_str,
)
from redline.review.result import TextPart, ToolResult, coerce_result
from redline.review.store import (
    ApplyCallback,
    PendingAction,
    PendingActionStore,
    RejectCallback,
    resolving_action,
)
from redline.tools.base import PREVIEW_BANNER, Tool, ToolContext
from redline.workspace.preview import Preview

if TYPE_CHECKING:
    from redline.jsontypes import JsonValue
    from redline.workspace.safe_apply import ApplyReceipt

STORE_UNAVAILABLE_MESSAGE = "Pending action store unavailable for custom tools in this runtime."
DEFAULT_SOURCE_TOOL_NAME = "custom_tool"
NO_OUTPUT = "(no output)"

# Provider APIs (OpenAI, Anthropic) accept only these function names.
TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class CustomToolError(RuntimeError):
    """A custom tool used the API wrongly, or the runtime cannot do what it asked."""


class PendingActionStoreUnavailable(CustomToolError):
    """``push_pending_action`` was called in a runtime without a pending-action store."""

    def __init__(self) -> None:
        super().__init__(STORE_UNAVAILABLE_MESSAGE)


class RunTimeout(CustomToolError):
    """``CustomToolAPI.run`` gave up on a command that took too long."""


@runtime_checkable
class CustomTool(Protocol):
    """The shape of a custom tool (any object with these members; subclassing is optional).

    ``execute`` may be plain or ``async`` and may return a ToolResult, a note-shaped dict
    (``{"content": [{"type": "text", "text": ...}], "details": ...}``), a string or None.
    Optional attribute: ``deferrable = True`` for tools that push pending actions.
    """

    name: str
    label: str
    description: str
    parameters: type[BaseModel]

    def execute(self, tool_call_id: str, params: Any) -> Any: ...


ToolOrTools: TypeAlias = "CustomTool | Mapping[str, Any] | Sequence[CustomTool | Mapping[str, Any]]"
CustomToolFactory: TypeAlias = Callable[["CustomToolAPI"], "ToolOrTools | Awaitable[ToolOrTools]"]


@dataclass(frozen=True)
class CompletedRun:
    """What ``CustomToolAPI.run`` saw: the exit status and the decoded output."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


@dataclass(frozen=True)
class _ActionScope:
    label: str
    source_tool_name: str
    #: The resolving action's id (filled in when its callback runs).
    action_id: str = ""


# Set while a pushed action's apply/reject runs, so ``apply_preview`` journals the write
# under that action's label and id without the tool repeating them.
_CURRENT_ACTION: contextvars.ContextVar[_ActionScope | None] = contextvars.ContextVar(
    "redline_custom_tool_action", default=None
)
# Set while the adapter runs a tool, to learn which actions this call pushed.
_PUSHED_IDS: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "redline_custom_tool_pushes", default=None
)


class CustomToolAPI:
    """What a factory and its tools may use: the workspace, a logger, the pending stack.

    Args:
        cwd: the workspace root (``api.cwd``, resolved).
        store: the pending stack ``push_pending_action`` pushes to (``None``: it raises
            :class:`PendingActionStoreUnavailable`).
        logger: ``api.logger`` (default: ``redline.plugins``).
        output: receives what the plugin's ``apply``/``reject`` callbacks print, as
            ``(origin, stream, text)`` (default: the log).
    """

    def __init__(
        self,
        cwd: Path,
        store: PendingActionStore | None,
        *,
        logger: logging.Logger | None = None,
        output: OutputSink | None = None,
    ) -> None:
        self.cwd = Path(cwd).resolve()
        self.store = store
        self.logger = logger or logging.getLogger("redline.plugins")
        self.output = output

    # -- subprocesses ---------------------------------------------------------------
    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float = 30.0,
        input: str | None = None,
    ) -> CompletedRun:
        """Run a command in the workspace (no shell) and capture its output as text."""
        if isinstance(argv, (str, bytes)):
            raise TypeError(
                "run() takes a list of arguments such as ['git', 'status'], not a string"
            )
        args = tuple(str(arg) for arg in argv)
        if not args:
            raise ValueError("run() needs at least the program to run")
        try:
            done = subprocess.run(
                args,
                cwd=self.cwd,
                input=input,
                stdin=subprocess.DEVNULL if input is None else None,
                capture_output=True,
                text=True,
                encoding="utf-8",
                errors="replace",
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise RunTimeout(
                f"command {' '.join(args)!r} timed out after {timeout:g} s in {self.cwd}"
            ) from None
        except FileNotFoundError:
            raise CustomToolError(f"cannot run {args[0]!r}: program not found") from None
        except PermissionError:
            raise CustomToolError(f"cannot run {args[0]!r}: permission denied") from None
        return CompletedRun(args, done.returncode, done.stdout or "", done.stderr or "")

    # -- writing files --------------------------------------------------------------
    def apply_preview(
        self,
        preview: Preview,
        *,
        label: str | None = None,
        source_tool_name: str | None = None,
    ) -> ApplyReceipt:
        """Write ``preview`` through safe apply: stale check, all-or-nothing, journal, undo.

        Called from a pushed action's ``apply``, the journal entry takes that action's
        label, tool name and id unless given here. Raises ``ApplyError`` on refusal.
        """
        from redline.workspace.safe_apply import apply_preview

        scope = _CURRENT_ACTION.get()
        return apply_preview(
            self.cwd,
            preview,
            label=label if label is not None else (scope.label if scope else "custom tool apply"),
            source_tool_name=(
                source_tool_name
                if source_tool_name is not None
                else (scope.source_tool_name if scope else DEFAULT_SOURCE_TOOL_NAME)
            ),
            action_id=scope.action_id if scope and scope.action_id else None,
        )

    # -- the pending stack ----------------------------------------------------------
    def push_pending_action(
        self,
        *,
        label: str,
        apply: ApplyCallback | None = None,
        reject: RejectCallback | None = None,
        details: JsonValue = None,
        preview: Preview | None = None,
        source_tool_name: str = DEFAULT_SOURCE_TOOL_NAME,
    ) -> str:
        """Queue a change for review; ``resolve`` later calls ``apply(reason)`` or ``reject(reason)``.

        Returns the new action's id. ``details`` that are a Preview become the preview.
        Without ``apply`` the action is the ``preview`` alone, written by safe apply when
        applied: any redline process may apply it, so it outlives this one (docs/queue.md).
        """
        if self.store is None:
            raise PendingActionStoreUnavailable()
        if preview is None and isinstance(details, Preview):
            preview = details
        if preview is not None:
            if not isinstance(preview, Preview):
                raise TypeError(
                    f"preview must be a redline.workspace.preview.Preview, not {type(preview).__name__}"
                )
            from redline.workspace.safe_apply import validate_preview

            validate_preview(self.cwd, preview)
            from redline.workspace.realpath import canonical_preview

            preview = canonical_preview(self.cwd, preview)
        if apply is None and preview is None:
            raise TypeError("push_pending_action needs a callable apply(reason), or a preview")
        if apply is not None and not callable(apply):
            raise TypeError("push_pending_action needs a callable apply(reason)")
        if reject is not None and not callable(reject):
            raise TypeError("reject must be callable or None")
        scope = _ActionScope(label, source_tool_name)
        origin = f"{source_tool_name} ({label})"
        if apply is None:
            assert preview is not None
            applies = _preview_apply(self.cwd, preview, label, source_tool_name)
        else:
            applies = _in_scope(apply, scope, Capture(origin, self.output))
        action = PendingAction(
            label=label,
            apply=applies,
            reject=(
                _in_scope(reject, scope, Capture(origin, self.output))
                if reject is not None
                else None
            ),
            details=details,
            source_tool_name=source_tool_name,
            preview=preview,
            preview_apply=apply is None,
        )
        # The store's listeners (events, the dashboard) are redline's code, not the plugin's.
        with not_capturing():
            action = self.store.push(action)
        pushed = _PUSHED_IDS.get()
        if pushed is not None:
            pushed.append(action.id)
        return action.id


def _noop_apply(_reason: str) -> None:
    return None


def _preview_apply(
    root: Path, preview: Preview, label: str, source_tool_name: str
) -> ApplyCallback:
    """The default apply of a custom tool's action: safe apply of its Preview, nothing else.

    Marked as such, so the review queue lists the action ``applied_by: "preview"``.
    """

    def apply(_reason: str) -> object:
        from redline.review.result import ToolResult
        from redline.workspace.safe_apply import apply_preview

        # The action as the store holds it: its id, its Preview with the real paths.
        current = resolving_action()
        receipt = apply_preview(
            root,
            current.preview if current is not None and current.preview else preview,
            label=label,
            source_tool_name=source_tool_name,
            action_id=(current.id or None) if current is not None else None,
        )
        return ToolResult.text_result(
            "", details={"entry_id": receipt.entry_id, "files": list(receipt.files)}
        )

    return apply


def _in_scope(
    callback: Callable[[str], object], scope: _ActionScope, capture: Capture
) -> Callable[[str], Awaitable[object]]:
    """Run ``callback`` (plain or async) with ``scope`` as the current action, isolated.

    A plain callback runs in a daemon thread (a stuck one is abandoned on stop or quit
    instead of blocking the session's loop); whatever it raises, ``SystemExit`` and
    ``KeyboardInterrupt`` included, reaches ``resolve`` as an ordinary exception.
    """

    async def wrapped(reason: str) -> object:
        current = resolving_action()
        token = _CURRENT_ACTION.set(replace(scope, action_id=current.id if current else ""))
        try:
            if inspect.iscoroutinefunction(callback):
                value = await await_plugin(callback(reason), capture)
            else:
                value = await await_in_thread(
                    callback, reason, name=scope.source_tool_name, capture=capture
                )
            if inspect.isawaitable(value):
                value = await await_plugin(value, capture)
            return value
        finally:
            _CURRENT_ACTION.reset(token)

    return wrapped


# -- the adapter --------------------------------------------------------------------


def tool_attr(tool: object, name: str, default: Any = None) -> Any:
    """Read a member from a tool object or a tool mapping."""
    if isinstance(tool, Mapping):
        return tool.get(name, default)
    return getattr(tool, name, default)


class InvalidCustomTool(ValueError):
    """A factory returned something that is not a usable tool."""


class CustomToolAdapter(Tool):
    """A custom tool dressed as a built-in :class:`Tool` for the session."""

    def __init__(
        self, tool: object, *, origin: str | None = None, output: OutputSink | None = None
    ) -> None:
        name = tool_attr(tool, "name")
        if not isinstance(name, str) or not name.strip():
            raise InvalidCustomTool(
                f"a tool ({type(tool).__name__}) has no name: set name to a non-empty string"
            )
        if not TOOL_NAME_RE.match(name):
            raise InvalidCustomTool(
                f"tool name {name!r} is invalid: use letters, digits, '_' and '-' (at most 64)"
            )
        parameters = tool_attr(tool, "parameters")
        if not (isinstance(parameters, type) and issubclass(parameters, BaseModel)):
            got = parameters.__name__ if isinstance(parameters, type) else type(parameters).__name__
            raise InvalidCustomTool(
                f"tool {name!r}: parameters must be a pydantic BaseModel subclass, got {got}"
            )
        execute = tool_attr(tool, "execute")
        if not callable(execute):
            raise InvalidCustomTool(f"tool {name!r}: execute(tool_call_id, params) is missing")
        label = tool_attr(tool, "label") or name
        description = tool_attr(tool, "description") or ""
        if not isinstance(label, str) or not isinstance(description, str):
            raise InvalidCustomTool(f"tool {name!r}: label and description must be strings")
        try:
            parameters.model_json_schema()
        except Exception as exc:
            raise InvalidCustomTool(
                f"tool {name!r}: parameters model {parameters.__name__} has no JSON schema: {exc}"
            ) from None
        self.custom = tool
        self.name = name
        self.label = label
        self.description = description
        self.parameters = parameters
        self.deferrable = bool(tool_attr(tool, "deferrable", False))
        self.hidden = False
        self._execute: Callable[[str, Any], Any] = execute
        # Where the tool came from (its plugin file), and who gets what it prints.
        self.origin = origin or name
        self.output = output

    def __repr__(self) -> str:
        return f"CustomToolAdapter({self.name!r})"

    def validate(self, raw: BaseModel | Mapping[str, Any] | None) -> BaseModel | ToolResult:
        """Raw arguments -> the tool's model, or an error result naming the bad fields."""
        if isinstance(raw, self.parameters):
            return raw
        if isinstance(raw, BaseModel):
            raw = raw.model_dump()
        try:
            return self.parameters.model_validate(raw if raw is not None else {})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(arguments)'}: {err['msg']}"
                for err in exc.errors()
            )
            return ToolResult.error(f"Invalid arguments for {self.name}: {problems}")

    async def execute(
        self, params: BaseModel | Mapping[str, Any] | None, ctx: ToolContext
    ) -> ToolResult:
        checked = self.validate(params)
        if isinstance(checked, ToolResult):
            return checked
        pushed: list[str] = []
        token = _PUSHED_IDS.set(pushed)
        try:
            value = await self._call(ctx.tool_call_id, checked)
        except PluginCrash as exc:
            return ToolResult.error(f"{self.name} failed: {exc}")
        except Exception as exc:
            cause = safe_str(exc) or "(no message)"
            return ToolResult.error(f"{self.name} failed: {type(exc).__name__}: {cause}")
        finally:
            _PUSHED_IDS.reset(token)
        try:
            result = coerce_result(value)
        except (TypeError, ValueError) as exc:
            return ToolResult.error(f"{self.name} returned an unusable result: {exc}")
        if result is None:
            result = ToolResult.text_result(NO_OUTPUT)
        if pushed and not result.is_error and not result.text.startswith(PREVIEW_BANNER):
            # Every preview's result starts with the banner so the model never mistakes a
            # queued change for a written one.
            result = replace(result, content=(TextPart(PREVIEW_BANNER), *result.content))
        return result

    async def _call(self, tool_call_id: str, params: BaseModel) -> object:
        capture = Capture(self.origin, self.output)
        if inspect.iscoroutinefunction(self._execute):
            return await await_plugin(self._execute(tool_call_id, params), capture)
        # A plain execute may block (subprocesses) or never return: it runs in a daemon
        # thread, so the session's loop stays responsive and a stop abandons it.
        value = await await_in_thread(
            self._execute, tool_call_id, params, name=self.name, capture=capture
        )
        if inspect.isawaitable(value):
            value = await await_plugin(value, capture)
        return value


class GuardedTool(Tool):
    """A plugin's own :class:`Tool` subclass, run like every other plugin code: what it
    prints is captured and whatever it raises (``SystemExit`` included) is its error."""

    def __init__(self, inner: Tool, *, origin: str, output: OutputSink | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.label = inner.label
        self.description = inner.description
        self.parameters = inner.parameters
        self.deferrable = inner.deferrable
        self.hidden = inner.hidden
        self.origin = origin
        self.output = output

    def __repr__(self) -> str:
        return f"GuardedTool({self.name!r})"

    def parameters_schema(self) -> dict[str, Any]:
        return self.inner.parameters_schema()

    async def execute(self, params: BaseModel, ctx: ToolContext) -> ToolResult:
        capture = Capture(self.origin, self.output)
        try:
            result: ToolResult = await await_plugin(self.inner.execute(params, ctx), capture)
        except PluginCrash as exc:
            return ToolResult.error(f"{self.name} failed: {exc}")
        return result
