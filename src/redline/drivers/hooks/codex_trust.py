"""Codex's consent to run a hook: project trust and ``hooks.state`` trusted hashes.

Codex 0.171.0 runs a hook from ``hooks.json`` only when (1) for a project's
``.codex/hooks.json``, the project is trusted (``[projects."<path>"] trust_level =
"trusted"`` in the user's ``$CODEX_HOME/config.toml``) and (2) each handler has
``[hooks.state."<hooks.json path>:<event>:<group>:<handler>"] trusted_hash = "sha256:…"``
there, the hash being over the handler's normalized identity (docs/agents-notes.md). An
untrusted hook is skipped silently, so redline checks both and never records trust
unless asked (``--trust-codex-hook``). The config is edited with tomlkit, keeping the
user's comments and order; it is written atomically.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from redline.drivers.hooks.settings_io import InstallError as TrustError
from redline.drivers.hooks.settings_io import write_text_atomic

if TYPE_CHECKING:
    from tomlkit import TOMLDocument

    from redline.jsontypes import JsonObject

#: A TOML table as tomlkit reads it (its tables are mappings).
Table: TypeAlias = Mapping[str, object]

#: hooks.json event names → the snake-case labels Codex uses in trust keys.
EVENT_LABELS = {
    "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "UserPromptSubmit": "user_prompt_submit",
}


def codex_home() -> Path:
    configured = os.environ.get("CODEX_HOME")
    return Path(configured) if configured else Path(os.path.expanduser("~")) / ".codex"


def config_path() -> Path:
    return codex_home() / "config.toml"


def handler_hash(event: str, group: JsonObject, handler: JsonObject) -> str:
    """The ``trusted_hash`` Codex expects for one command handler of a matcher group."""
    timeout = handler.get("timeout", 600)
    normalized: JsonObject = {
        "type": "command",
        "command": handler.get("command"),
        "timeout": max(1, int(timeout if isinstance(timeout, (int, float, str)) else 600)),
        "async": bool(handler.get("async", False)),
    }
    if handler.get("statusMessage") is not None:
        normalized["statusMessage"] = handler["statusMessage"]
    identity: JsonObject = {"event_name": EVENT_LABELS[event], "hooks": [normalized]}
    if group.get("matcher") is not None:
        identity["matcher"] = group["matcher"]
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def trust_entries(
    hooks_path: Path, data: JsonObject, ours: Callable[[JsonObject], bool]
) -> dict[str, str]:
    """``{state key: hash}`` for the handlers of ``data`` (a hooks.json) that ``ours(handler)``
    accepts, at their current positions."""
    found: dict[str, str] = {}
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return found
    for event, label in EVENT_LABELS.items():
        groups = hooks.get(event)
        if not isinstance(groups, list):
            continue
        for g, group in enumerate(groups):
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(group, dict) or not isinstance(inner, list):
                continue
            for h, handler in enumerate(inner):
                if isinstance(handler, dict) and ours(handler):
                    key = f"{hooks_path}:{label}:{g}:{h}"
                    found[key] = handler_hash(event, group, handler)
    return found


def read_config(path: Path | None = None) -> TOMLDocument:
    """The config as a tomlkit document (empty when the file does not exist)."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    path = path or config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return tomlkit.document()
    except (OSError, UnicodeDecodeError) as exc:
        raise TrustError(f"{path}: cannot read: {exc}") from None
    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        raise TrustError(f"{path}: not valid TOML ({exc}); nothing was changed") from None


def _table(doc: Table, key: str) -> Table | None:
    value = doc.get(key)
    return value if isinstance(value, Mapping) else None


def project_trusted(doc: Table, root: Path) -> bool:
    """Whether Codex trusts ``root`` (or the git repository it is in) as a project."""
    projects = _table(doc, "projects")
    if projects is None:
        return False
    candidates = [root]
    for parent in [root, *root.parents]:
        if (parent / ".git").exists():
            candidates.append(parent)
            break
    for candidate in candidates:
        entry = projects.get(str(candidate))
        if hasattr(entry, "get") and entry.get("trust_level") == "trusted":
            return True
    return False


def hooks_enabled(doc: Table) -> bool:
    features = _table(doc, "features")
    return not (features is not None and features.get("hooks") is False)


def untrusted(doc: Table, wanted: dict[str, str]) -> dict[str, str]:
    """The entries of ``wanted`` whose trusted hash is missing or different in ``doc``."""
    hooks = _table(doc, "hooks")
    state = _table(hooks, "state") if hooks is not None else None
    missing = {}
    for key, digest in wanted.items():
        entry = state.get(key) if state is not None else None
        if entry is None or not hasattr(entry, "get") or entry.get("trusted_hash") != digest:
            missing[key] = digest
    return missing


def toml_lines(entries: dict[str, str]) -> str:
    """The lines a person adds to config.toml to trust ``entries``."""
    return "\n".join(
        f'[hooks.state.{json.dumps(key)}]\ntrusted_hash = "{digest}"\n'
        for key, digest in entries.items()
    )


def set_trust(entries: dict[str, str], remove: dict[str, str] | None = None) -> bool:
    """Record ``entries`` in config.toml (and drop ``remove`` where its hash still matches);
    True when the file changed."""
    import tomlkit

    path = config_path()
    doc = read_config(path)
    before = tomlkit.dumps(doc)
    hooks = doc.get("hooks")
    if hooks is None:
        hooks = tomlkit.table(is_super_table=True)
        doc["hooks"] = hooks
    elif not isinstance(hooks, MutableMapping):
        raise TrustError(f"{path}: `hooks` is not a table; nothing was changed")
    state = hooks.get("state")
    if state is None:
        state = tomlkit.table(is_super_table=True)
        hooks["state"] = state
    elif not isinstance(state, MutableMapping):
        raise TrustError(f"{path}: `hooks.state` is not a table; nothing was changed")
    for key, digest in (remove or {}).items():
        entry = state.get(key)
        if isinstance(entry, Mapping) and entry.get("trusted_hash") == digest:
            del state[key]
    for key, digest in entries.items():
        table = tomlkit.table()
        table["trusted_hash"] = digest
        state[key] = table
    if not state:
        del hooks["state"]
    if not hooks:
        del doc["hooks"]
    after = tomlkit.dumps(doc)
    if after.strip() and not before.endswith("\n\n"):
        after = after.rstrip("\n") + "\n"  # a removed table leaves no blank tail
    if after == before:
        return False
    write_text_atomic(path, after)
    return True
