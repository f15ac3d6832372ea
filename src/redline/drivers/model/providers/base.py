"""The provider contract: a provider-neutral conversation in, one model turn out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from redline.jsontypes import JsonObject

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model sees it: name, description and JSON-schema parameters."""

    name: str
    description: str
    parameters: JsonObject


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: JsonObject
    # The exact argument text the model sent; kept so a malformed call can be reported.
    raw_arguments: str = ""


@dataclass(frozen=True)
class Message:
    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool = False


@dataclass(frozen=True)
class ForceTool:
    """Ask the model to call exactly this tool next."""

    name: str


ToolChoice: TypeAlias = Literal["auto", "required", "none"] | ForceTool


@dataclass(frozen=True)
class ModelRequest:
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...]
    tool_choice: ToolChoice = "auto"


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class ModelResponse:
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None
    stop_reason: str = ""
    # A scripted provider's pause request before the next turn, in seconds.
    wait_after: float = 0.0
    extra: JsonObject = field(default_factory=dict)


TextSink: TypeAlias = Callable[[str], None]


class ProviderError(Exception):
    """A model call failed; the message is shown to the person as is."""


class ToolChoiceRejected(ProviderError):
    """The server refused the requested tool_choice (e.g. HTTP 400); the runtime downgrades."""


class Provider(ABC):
    """One model endpoint.

    ``can_force_tool`` says whether ``ForceTool`` is honoured natively; if not, the runtime
    asks for ``"required"`` instead. ``scripted`` providers call no language model and are
    labelled as such everywhere.
    """

    label: str = ""
    scripted: bool = False
    can_force_tool: bool = True
    timeout: float = 60.0

    @abstractmethod
    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        """Run one model turn, streaming text deltas to ``on_text`` as they arrive."""

    async def aclose(self) -> None:
        """Release network resources; called once when the session closes."""
        return None
