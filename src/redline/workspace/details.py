"""An action's details, typed per kind, and the one function pair to and from their JSON.

A pending action says what it is (:data:`ActionKind`): a file change, an ast_edit batch, an
agent's permission request, or a custom tool's action. redline's own kinds carry typed
details (:class:`FileChangeDetails`, :class:`AstEditDetails`, :class:`PermissionDetails`); a
custom tool's are any JSON value (:data:`~redline.jsontypes.JsonValue`), kept as given.

The queue record stores the JSON (:func:`details_to_json`) exactly as redline wrote these
dicts before they were typed, so ``redline pending show --json`` and every other output keeps
its shape; :func:`details_from_json` reads it back. A record is untrusted input: a known key
whose value has the wrong type is not taken into its typed field but kept as it was, in
``extra`` with every key this redline does not know, and details that are not a JSON object
stay the raw JSON value. Reading never fails and never loses anything:
``details_to_json(details_from_json(kind, value)) == value`` for every JSON value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeAlias, TypeGuard

if TYPE_CHECKING:  # annotations only: the hook's path never loads the alias (typing_extensions)
    from redline.jsontypes import JsonObject, JsonValue

ActionKind: TypeAlias = Literal["file_change", "ast_edit", "permission", "custom"]
ACTION_KINDS: tuple[ActionKind, ...] = ("file_change", "ast_edit", "permission", "custom")
#: The change kinds of a Preview (``FileChange.kind``): a file change's ``"kind"``.
CHANGE_KINDS = ("create", "modify", "delete", "rename")


def _is_object(value: object) -> TypeGuard[JsonObject]:
    return isinstance(value, dict) and all(isinstance(k, str) for k in value)


def _take_str(rest: dict[str, JsonValue], key: str) -> str | None:
    """``rest[key]`` taken out when it is a string (else left in ``rest``: None)."""
    value = rest.get(key)
    if isinstance(value, str):
        del rest[key]
        return value
    return None


def _take_int(rest: dict[str, JsonValue], key: str) -> int | None:
    value = rest.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        del rest[key]
        return value
    return None


def _take_strs(rest: dict[str, JsonValue], key: str) -> tuple[str, ...] | None:
    value = rest.get(key)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        del rest[key]
        return tuple(str(v) for v in value)
    return None


def _put(data: JsonObject, key: str, value: JsonValue | tuple[str, ...]) -> None:
    """``data[key] = value`` unless value is None (a tuple becomes a list)."""
    if value is None:
        return
    data[key] = list(value) if isinstance(value, tuple) else value


# -- the facts of an external agent's call (hooks) ----------------------------------------
_CALL_KEYS = ("agent", "tool_name", "tool_use_id", "session_id", "cwd", "permission_mode")


@dataclass(frozen=True)
class AgentCall:
    """The hook call behind an action: the agent, its tool, its ids (``redline hook``).

    ``tool_use_id``, ``session_id``, ``cwd`` and ``permission_mode`` are None where the
    agent's payload had none (stored as JSON null, as the agent sent it)."""

    agent: str
    tool_name: str
    tool_use_id: str | None = None
    session_id: str | None = None
    cwd: str | None = None
    permission_mode: str | None = None
    #: The model the agent reported (Codex's payload): ``Assisted-by`` for a later apply.
    model: str | None = None

    def write(self, data: JsonObject) -> None:
        data.update(
            agent=self.agent,
            tool_name=self.tool_name,
            tool_use_id=self.tool_use_id,
            session_id=self.session_id,
            cwd=self.cwd,
            permission_mode=self.permission_mode,
        )
        _put(data, "model", self.model)

    @classmethod
    def take(cls, rest: dict[str, JsonValue]) -> AgentCall | None:
        """The call, its keys taken out of ``rest``, when every one of them is there with
        the right type (else None and ``rest`` as it was)."""
        if not all(key in rest for key in _CALL_KEYS):
            return None
        agent, tool = rest["agent"], rest["tool_name"]
        optional = [rest[key] for key in _CALL_KEYS[2:]]
        if not isinstance(agent, str) or not isinstance(tool, str):
            return None
        if not all(value is None or isinstance(value, str) for value in optional):
            return None
        for key in _CALL_KEYS:
            del rest[key]
        use_id, session, cwd, mode = (v if isinstance(v, str) else None for v in optional)
        return cls(agent, tool, use_id, session, cwd, mode, _take_str(rest, "model"))


@dataclass(frozen=True)
class CallGroup:
    """One file of a multi-file tool call (a Codex ``apply_patch``): ``index`` of ``size``."""

    group: str
    index: int
    size: int

    def write(self, data: JsonObject) -> None:
        data.update(group=self.group, group_index=self.index, group_size=self.size)

    @classmethod
    def take(cls, rest: dict[str, JsonValue]) -> CallGroup | None:
        group, index, size = rest.get("group"), rest.get("group_index"), rest.get("group_size")
        if not isinstance(group, str) or not _is_int(index) or not _is_int(size):
            return None
        for key in ("group", "group_index", "group_size"):
            del rest[key]
        return cls(group, index, size)


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Imported:
    """A change imported from another tool's history (``details.import``; git_watch)."""

    kind: str
    source: str
    path: str
    author: str | None = None
    assisted_by: tuple[str, ...] | None = None

    def write(self, data: JsonObject) -> None:
        data["import"] = {"kind": self.kind, "source": self.source, "path": self.path}
        _put(data, "author", self.author)
        _put(data, "assisted_by", self.assisted_by)

    @classmethod
    def take(cls, rest: dict[str, JsonValue]) -> Imported | None:
        found = rest.get("import")
        if not _is_object(found) or set(found) != {"kind", "source", "path"}:
            return None
        kind, source, path = found["kind"], found["source"], found["path"]
        if not (isinstance(kind, str) and isinstance(source, str) and isinstance(path, str)):
            return None
        del rest["import"]
        return cls(kind, source, path, _take_str(rest, "author"), _take_strs(rest, "assisted_by"))


def _take_source(rest: dict[str, JsonValue]) -> tuple[bool, JsonObject | None]:
    """An ACP agent's ``source`` (its ``AcpSource`` as a dict, or null): (there, value)."""
    if "source" not in rest:
        return False, None
    value = rest["source"]
    if value is None or _is_object(value):
        del rest["source"]
        return True, value
    return False, None


# -- the kinds ----------------------------------------------------------------------------
@dataclass(frozen=True)
class FileChangeDetails:
    """A file change's details: what each driver knows of it (every field optional)."""

    #: The file the tool was asked to change (``edit``, ``write``, an ACP write).
    path: str | None = None
    #: The Preview's change kind (``create``, ``modify``, …), stored as ``"kind"``.
    change: str | None = None
    #: The hook call that proposed it.
    call: AgentCall | None = None
    group: CallGroup | None = None
    #: An ACP agent's source (``AcpSource.to_dict()``, null without one) when ``acp``.
    acp: bool = False
    acp_source: JsonObject | None = None
    imported: Imported | None = None
    #: How the external agent behind it ended (its session is over).
    agent_ended: str | None = None
    #: Keys this redline does not know (or whose values it could not read), kept as given.
    extra: Mapping[str, JsonValue] = field(default_factory=dict)

    def to_json(self) -> JsonObject:
        data: JsonObject = dict(self.extra)
        if self.acp:
            data["source"] = self.acp_source
        if self.call is not None:
            self.call.write(data)
        _put(data, "path", self.path)
        _put(data, "kind", self.change)
        if self.group is not None:
            self.group.write(data)
        if self.imported is not None:
            self.imported.write(data)
        _put(data, "agent_ended", self.agent_ended)
        return data

    @classmethod
    def from_json(cls, data: JsonObject) -> FileChangeDetails:
        rest = dict(data)
        acp, source = _take_source(rest)
        call = AgentCall.take(rest)
        path = _take_str(rest, "path")
        change = rest.get("kind")
        if isinstance(change, str) and change in CHANGE_KINDS:
            del rest["kind"]
        else:
            change = None
        return cls(
            path=path,
            change=change,
            call=call,
            group=CallGroup.take(rest),
            acp=acp,
            acp_source=source,
            imported=Imported.take(rest),
            agent_ended=_take_str(rest, "agent_ended"),
            extra=rest,
        )


@dataclass(frozen=True)
class AstEditError:
    """A file ast_edit could not search (``details.errors[]``)."""

    path: str
    message: str | None


@dataclass(frozen=True)
class AstEditDetails:
    """An ast_edit batch: its replacements over its files, the files it could not read."""

    replacements: int
    files: tuple[str, ...] = ()
    errors: tuple[AstEditError, ...] = ()
    limit_reached: bool = False
    agent_ended: str | None = None
    extra: Mapping[str, JsonValue] = field(default_factory=dict)

    def to_json(self) -> JsonObject:
        data: JsonObject = dict(self.extra)
        data.update(
            replacements=self.replacements,
            files=list(self.files),
            errors=[{"path": e.path, "message": e.message} for e in self.errors],
            limit_reached=self.limit_reached,
        )
        _put(data, "agent_ended", self.agent_ended)
        return data

    @classmethod
    def from_json(cls, data: JsonObject) -> AstEditDetails | None:
        """None when the batch's own fields are not all there with their types."""
        replacements, files = data.get("replacements"), data.get("files")
        errors, limit = data.get("errors"), data.get("limit_reached")
        if not _is_int(replacements) or not isinstance(limit, bool):
            return None
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            return None
        if not isinstance(errors, list) or not all(
            _is_object(e)
            and set(e) == {"path", "message"}
            and isinstance(e["path"], str)
            and (e["message"] is None or isinstance(e["message"], str))
            for e in errors
        ):
            return None
        rest = {k: v for k, v in data.items() if k not in _AST_KEYS}
        return cls(
            replacements=replacements,
            files=tuple(str(f) for f in files),
            errors=tuple(
                AstEditError(str(e["path"]), _str_or_none(e["message"]))
                for e in errors
                if _is_object(e)
            ),
            limit_reached=limit,
            agent_ended=_take_str(rest, "agent_ended"),
            extra=rest,
        )


_AST_KEYS = ("replacements", "files", "errors", "limit_reached")


def _str_or_none(value: JsonValue) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class DiffShown:
    """One diff an ACP agent showed with a permission request that could not be verified."""

    path: str
    old_text: str | None
    new_text: str


@dataclass(frozen=True)
class PermissionDetails:
    """An agent's request for permission: a hook's shell call, an ACP tool call."""

    #: The hook call (``redline hook`` for a shell command) and its tool input.
    call: AgentCall | None = None
    tool_input: JsonObject | None = None
    #: An ACP agent's request: its source (``AcpSource.to_dict()`` or null), its tool
    #: call's id, kind (``edit``, ``execute``, …) and raw input as the agent sent them.
    acp: bool = False
    acp_source: JsonObject | None = None
    tool_call_id: str | None = None
    tool_kind: str | None = None
    raw_input: JsonValue = None
    #: Why the request's change cannot be checked against the disk, and its diffs then.
    not_verifiable: str | None = None
    diffs: tuple[DiffShown, ...] | None = None
    agent_ended: str | None = None
    extra: Mapping[str, JsonValue] = field(default_factory=dict)

    def to_json(self) -> JsonObject:
        data: JsonObject = dict(self.extra)
        if self.acp:
            data["source"] = self.acp_source
            _put(data, "tool_call_id", self.tool_call_id)
            _put(data, "kind", self.tool_kind)
            data["raw_input"] = self.raw_input
        if self.call is not None:
            self.call.write(data)
        _put(data, "tool_input", self.tool_input)
        _put(data, "not_verifiable", self.not_verifiable)
        if self.diffs is not None:
            data["diffs"] = [
                {"path": d.path, "old_text": d.old_text, "new_text": d.new_text} for d in self.diffs
            ]
        _put(data, "agent_ended", self.agent_ended)
        return data

    @classmethod
    def from_json(cls, data: JsonObject) -> PermissionDetails:
        rest = dict(data)
        acp = "raw_input" in rest and "source" in rest
        source: JsonObject | None = None
        raw: JsonValue = None
        if acp:
            acp, source = _take_source(rest)
        if acp:
            raw = rest.pop("raw_input")
        tool_input = rest.get("tool_input")
        if _is_object(tool_input):
            del rest["tool_input"]
        else:
            tool_input = None
        return cls(
            call=AgentCall.take(rest),
            tool_input=tool_input,
            acp=acp,
            acp_source=source,
            tool_call_id=_take_str(rest, "tool_call_id") if acp else None,
            tool_kind=_take_str(rest, "kind") if acp else None,
            raw_input=raw,
            not_verifiable=_take_str(rest, "not_verifiable"),
            diffs=_take_diffs(rest),
            agent_ended=_take_str(rest, "agent_ended"),
            extra=rest,
        )


def _take_diffs(rest: dict[str, JsonValue]) -> tuple[DiffShown, ...] | None:
    value = rest.get("diffs")
    if not isinstance(value, list):
        return None
    diffs: list[DiffShown] = []
    for item in value:
        if not _is_object(item) or set(item) != {"path", "old_text", "new_text"}:
            return None
        path, old, new = item["path"], item["old_text"], item["new_text"]
        if not isinstance(path, str) or not isinstance(new, str):
            return None
        if old is not None and not isinstance(old, str):
            return None
        diffs.append(DiffShown(path, old, new))
    del rest["diffs"]
    return tuple(diffs)


TypedDetails: TypeAlias = "FileChangeDetails | AstEditDetails | PermissionDetails"
#: What a PendingAction's ``details`` hold: typed for redline's own kinds, any JSON value
#: for a custom tool's (and for a record whose details are not an object).
ActionDetails: TypeAlias = "TypedDetails | JsonValue"

_TYPED = (FileChangeDetails, AstEditDetails, PermissionDetails)


def details_to_json(details: ActionDetails) -> JsonValue:
    """The JSON a queue record (and every output) holds for ``details``."""
    if isinstance(details, _TYPED):
        return details.to_json()
    return details


def details_from_json(kind: str, value: JsonValue) -> ActionDetails:
    """``details`` of an action of ``kind`` as read from its record (untrusted): typed for
    redline's kinds when the value is an object, else the value as it is. Never raises."""
    if not _is_object(value):
        return value
    if kind == "file_change":
        return FileChangeDetails.from_json(value)
    if kind == "ast_edit":
        found = AstEditDetails.from_json(value)
        return found if found is not None else value
    if kind == "permission":
        return PermissionDetails.from_json(value)
    return value


def agent_ended(details: ActionDetails) -> str | None:
    """How the external agent behind an action ended (``agent_ended``), or None."""
    if isinstance(details, _TYPED):
        return details.agent_ended
    if isinstance(details, dict):
        ended = details.get("agent_ended")
        return ended if isinstance(ended, str) else None
    return None


def _raw(details: ActionDetails, key: str) -> JsonValue:
    """``key`` of details that are not typed (a custom tool's, a record's that did not
    read typed), or of a typed one's ``extra``."""
    if isinstance(details, _TYPED):
        return details.extra.get(key)
    return details.get(key) if isinstance(details, dict) else None


def reported_model(details: ActionDetails) -> str | None:
    """The model the agent behind an action reported (a hook call's ``model``), or None."""
    if isinstance(details, (FileChangeDetails, PermissionDetails)) and details.call is not None:
        return details.call.model
    value = _raw(details, "model")
    return value if isinstance(value, str) else None


def imported(details: ActionDetails) -> Imported | None:
    """What an imported action says of its source commits (author, their Assisted-by).

    Read from typed details, else from raw ones as leniently as redline always read them
    (an ``assisted_by`` list keeps its strings)."""
    if isinstance(details, FileChangeDetails) and details.imported is not None:
        return details.imported
    author, found = _raw(details, "author"), _raw(details, "assisted_by")
    helpers = tuple(v for v in found if isinstance(v, str)) if isinstance(found, list) else None
    if not isinstance(author, str) and helpers is None:
        return None
    return Imported("", "", "", author if isinstance(author, str) else None, helpers)


#: The tools whose actions are redline's own file changes (model runtime, MCP, imports).
_FILE_TOOLS = ("edit", "write", "import", "mcp:propose_edit", "mcp:propose_write")


def infer_kind(
    source_tool_name: str, has_preview: bool, source_kind: str, applied_by: str = "preview"
) -> ActionKind:
    """The kind of an action recorded before records named it (format version 1), from
    the tool that made it: anything redline does not know as its own is a custom tool's."""
    if source_tool_name in ("ast_edit", "mcp:ast_edit"):
        return "ast_edit"
    if source_tool_name in _FILE_TOOLS:
        return "file_change" if has_preview else "custom"
    if source_kind in ("hook", "acp"):
        # A held write (ACP) or a hook's file: a Preview; an agent's request: none, or
        # one its agent writes itself (an ACP permission, applied by its owner).
        if not has_preview:
            return "permission"
        if source_kind == "acp" and applied_by == "owner":
            return "permission"
        return "file_change"
    return "custom"


__all__ = [
    "ACTION_KINDS",
    "CHANGE_KINDS",
    "ActionDetails",
    "ActionKind",
    "AgentCall",
    "AstEditDetails",
    "AstEditError",
    "CallGroup",
    "DiffShown",
    "FileChangeDetails",
    "Imported",
    "PermissionDetails",
    "TypedDetails",
    "agent_ended",
    "details_from_json",
    "details_to_json",
    "imported",
    "infer_kind",
    "reported_model",
]
