"""What a tool is to the runtime: a name, a pydantic parameter model and ``execute``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from redline.review.result import ToolResult
from redline.review.store import PendingActionStore

PREVIEW_BANNER = "Preview only: nothing has been written yet. Call resolve to apply or discard."


def _no_update(_text: str) -> None:
    return None


@dataclass
class ToolContext:
    """What a running tool may use: the workspace root, the session's store, progress."""

    cwd: Path
    store: PendingActionStore | None
    tool_call_id: str = ""
    update: Callable[[str], None] = field(default=_no_update)


class Tool(ABC):
    """A tool the model can call.

    ``deferrable`` tools produce previews (pending actions); while one is registered the
    agent resolver offers ``resolve`` to the model. ``hidden`` tools are not listed to
    people as ordinary tools (``resolve`` is the only one).
    """

    name: str = ""
    label: str = ""
    description: str = ""
    parameters: type[BaseModel]
    deferrable: bool = False
    hidden: bool = False

    @abstractmethod
    async def execute(self, params: BaseModel, ctx: ToolContext) -> ToolResult:
        """Run the tool; errors the model should see are returned with ``is_error``."""

    def parameters_schema(self) -> dict[str, Any]:
        return tool_parameters_schema(self.parameters)


def tool_parameters_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema a provider sends for a parameter model (no pydantic titles)."""
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        if isinstance(prop, dict):
            prop.pop("title", None)
    return schema
