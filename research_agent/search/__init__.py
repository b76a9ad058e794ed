"""Search providers: one protocol, a registry, the local corpus and web providers."""

from .base import ProviderFailure, SearchProvider, SearchResults

__all__ = ["SearchProvider", "SearchResults", "ProviderFailure"]
