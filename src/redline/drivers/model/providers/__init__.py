"""Model providers and the ``--model`` string parser.

``scripted:PATH`` plays a JSON plan (offline), ``openai:MODEL`` talks to OpenAI or any
OpenAI-compatible server, ``anthropic:MODEL`` needs the optional extra. Without
``--model``, ``$REDLINE_MODEL`` is used, then ``model`` in ``.redline/config.toml`` or the
user config file.
"""

from __future__ import annotations

import os
from pathlib import Path

from redline.drivers.model.providers.base import Provider, ProviderError

MODEL_ENV = "REDLINE_MODEL"


class ModelSpecError(ValueError):
    """The ``--model`` string (or the plan it names) is bad input."""


def default_model(cwd: Path) -> str | None:
    """The configured model string, or None when nothing is configured."""
    from redline.config import load_settings

    return load_settings(cwd).model


def create_provider(
    spec: str,
    *,
    cwd: Path,
    base_url: str | None = None,
    timeout: float = 60.0,
    api_key_env: str | None = None,
) -> Provider:
    """Build the provider a ``--model`` string names.

    ``api_key_env`` names the environment variable holding the key (default: the
    provider's own, ``OPENAI_API_KEY`` or ``ANTHROPIC_API_KEY``).
    """
    kind, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise ModelSpecError(
            f"model {spec!r}: expected scripted:PLAN.json, openai:MODEL or anthropic:MODEL"
        )
    if kind == "scripted":
        from redline.drivers.model.providers.scripted import PlanError, ScriptedProvider

        plan = Path(rest).expanduser()
        if not plan.is_absolute():
            plan = (cwd / plan) if (cwd / plan).exists() else Path.cwd() / plan
        try:
            return ScriptedProvider(plan)
        except PlanError as exc:
            raise ModelSpecError(str(exc)) from None
    if kind not in ("openai", "anthropic"):
        raise ModelSpecError(
            f"model {spec!r}: unknown provider {kind!r} (use scripted, openai or anthropic)"
        )
    api_key: str | None = None
    if api_key_env:
        api_key = os.environ.get(api_key_env) or None
        if api_key is None:
            raise ProviderError(f"{kind}: {api_key_env} is not set (named by api_key_env)")
    if kind == "openai":
        from redline.drivers.model.providers.openai_provider import OpenAIProvider

        return OpenAIProvider(rest, base_url=base_url, api_key=api_key, timeout=timeout)
    if kind == "anthropic":
        from redline.drivers.model.providers.anthropic_provider import AnthropicProvider

        return AnthropicProvider(rest, base_url=base_url, api_key=api_key, timeout=timeout)
    raise ModelSpecError(
        f"model {spec!r}: unknown provider {kind!r} (use scripted, openai or anthropic)"
    )


__all__ = ["ModelSpecError", "Provider", "ProviderError", "create_provider", "default_model"]
