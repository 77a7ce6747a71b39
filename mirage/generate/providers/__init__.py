"""Providers behind one interface; each module imports its SDK only when the provider is built."""

from __future__ import annotations

from mirage.config.generate import ModelSpec
from mirage.generate.providers.base import Provider

PROVIDERS: dict[str, str] = {
    "local": "mirage.generate.providers.local:LocalProvider",
    "vllm": "mirage.generate.providers.vllm:VLLMProvider",
    "openai": "mirage.generate.providers.openai:OpenAIProvider",
    "anthropic": "mirage.generate.providers.anthropic:AnthropicProvider",
}


def provider_class(provider: str) -> type[Provider]:
    import importlib

    module, attr = PROVIDERS[provider].split(":")
    return getattr(importlib.import_module(module), attr)


def build_provider(name: str, spec: ModelSpec, longest_request: int | None = None) -> Provider:
    """Instantiate the provider for registry entry `name`; `longest_request` (the token bound of the run's longest
    request) sizes the engines that plan GPU memory by it (vllm)."""
    cls = provider_class(spec.provider)
    return cls(name, spec, longest_request=longest_request) if spec.provider == "vllm" else cls(name, spec)
