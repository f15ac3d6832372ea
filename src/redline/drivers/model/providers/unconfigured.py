"""The provider behind a dashboard opened with no model configured.

The whole session still works (review, undo, plugins, trust); only asking the agent
something explains what is missing, as one clear error.
"""

from __future__ import annotations

from redline.drivers.model.providers.base import (
    ModelRequest,
    ModelResponse,
    Provider,
    ProviderError,
    TextSink,
)


class UnconfiguredProvider(Provider):
    label = "no model configured"

    def __init__(self, message: str) -> None:
        self.message = message

    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        raise ProviderError(self.message)
