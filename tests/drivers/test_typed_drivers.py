"""What the drivers hold is typed (issue 43).

No annotation under ``src/redline/drivers/`` names ``Any`` — a session, queue, action or
resolution is its class (imported under ``TYPE_CHECKING`` where the import must stay lazy),
an agent's payload, a settings file or a wire message is ``redline.jsontypes.JsonValue`` /
``JsonObject`` — except the few objects of the optional ``anthropic`` SDK listed below,
which is not installed for type checking.
"""

from __future__ import annotations

import ast
from pathlib import Path

import redline.drivers

DRIVERS = Path(redline.drivers.__file__).parent

#: (module under drivers/, function or class, annotated name): the only ``Any`` allowed.
ALLOWED = {
    ("model/providers/anthropic_provider.py", "StreamAccumulator.feed", "event"),
    ("model/providers/anthropic_provider.py", "AnthropicProvider.__init__", "self._client"),
    ("model/providers/anthropic_provider.py", "AnthropicProvider._get_client", "return"),
}


def _names_any(node: ast.AST) -> bool:
    """Whether the type expression ``node`` mentions ``Any`` (quoted parts included)."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id == "Any":
            return True
        if isinstance(sub, ast.Attribute) and sub.attr == "Any":
            return True
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            try:
                quoted = ast.parse(sub.value, mode="eval")
            except SyntaxError:
                continue
            if _names_any(quoted):
                return True
    return False


def any_annotations(source: str) -> set[tuple[str, str]]:
    """``(scope, name)`` of every annotation, alias or type argument in ``source`` that
    names ``Any``: parameters, returns, annotated assignments, and plain assignments or
    calls whose value mentions it (``Match = Callable[[Any], str]``)."""
    found: set[tuple[str, str]] = set()

    def visit(node: ast.AST, scope: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = f"{scope}.{child.name}".lstrip(".")
                args = child.args
                every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
                every += [a for a in (args.vararg, args.kwarg) if a is not None]
                for arg in every:
                    if arg.annotation is not None and _names_any(arg.annotation):
                        found.add((inner, arg.arg))
                if child.returns is not None and _names_any(child.returns):
                    found.add((inner, "return"))
                visit(child, inner)
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{scope}.{child.name}".lstrip("."))
            elif isinstance(child, ast.AnnAssign):
                if _names_any(child.annotation) or (
                    child.value is not None and _names_any(child.value)
                ):
                    found.add((scope, ast.unparse(child.target)))
            elif isinstance(child, (ast.Assign, ast.Expr, ast.Return)):
                if child.value is not None and _names_any(child.value):
                    found.add((scope, ast.unparse(child)))
            else:
                visit(child, scope)

    visit(ast.parse(source), "")
    return found


def test_the_walk_finds_any_wherever_a_driver_could_hide_it() -> None:
    source = (
        "from typing import Any, cast\n"
        "import typing\n"
        "Match = Callable[[Any], 'str | None']\n"
        "class Call:\n"
        "    def heard(self, action: 'Any', resolution: dict[str, typing.Any]) -> None:\n"
        "        self._session: Any = None\n"
        "        x = cast(Any, 1)\n"
        "    async def run(self, *args: object, **kw: Any) -> list[Any]:\n"
        "        if True:\n"
        "            queue: Any = None\n"
        "def ok(payload: JsonObject) -> JsonValue: ...\n"
    )
    assert any_annotations(source) == {
        ("", "Match = Callable[[Any], 'str | None']"),
        ("Call.heard", "action"),
        ("Call.heard", "resolution"),
        ("Call.heard", "self._session"),
        ("Call.heard", "x = cast(Any, 1)"),
        ("Call.run", "kw"),
        ("Call.run", "return"),
        ("Call.run", "queue"),
    }


def test_no_any_under_drivers_but_the_optional_anthropic_sdk() -> None:
    found = {
        (path.relative_to(DRIVERS).as_posix(), scope, name)
        for path in sorted(DRIVERS.rglob("*.py"))
        for scope, name in any_annotations(path.read_text(encoding="utf-8"))
    }
    assert found == ALLOWED
    assert not any(module.startswith("hooks/") for module, _scope, _name in found)


def test_the_drivers_share_the_one_json_alias() -> None:
    """No driver defines a JSON alias of its own: they import redline.jsontypes'."""
    own = []
    users = set()
    for path in sorted(DRIVERS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            own += [
                f"{path.name}: {t.id}"
                for t in targets
                if isinstance(t, ast.Name) and t.id.lower().startswith("json")
            ]
            if isinstance(node, ast.ImportFrom) and node.module == "redline.jsontypes":
                users.add(path.relative_to(DRIVERS).parts[0])
    assert own == []
    assert users == {"acp", "hooks", "model"}
