"""research-agent: research a question and write a cited, self-critiqued markdown report.

    from research_agent import research, research_sync, ResearchResult
    result = research_sync("How does PostgreSQL VACUUM reclaim space?")
    print(result.report_path)
"""

from .config import MODES, Mode, Settings, load_settings
from .errors import (
    Cancelled,
    ConfigError,
    DiskFull,
    InputError,
    InvalidModelOutput,
    LLMError,
    LLMTimeout,
    LLMUnavailable,
    ModelNotFound,
    ResearchError,
    RunTimeout,
    SearchError,
    StorageError,
)
from .llm import ChatModel, ChatRequest, ChatResponse, Usage
from .pipeline import Iteration, ResearchResult, SourceSummary, research, research_sync
from .version import __version__

__all__ = [
    "research",
    "research_sync",
    "ResearchResult",
    "SourceSummary",
    "Iteration",
    "Settings",
    "Mode",
    "MODES",
    "load_settings",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "Usage",
    "ResearchError",
    "ConfigError",
    "InputError",
    "LLMError",
    "LLMUnavailable",
    "LLMTimeout",
    "ModelNotFound",
    "InvalidModelOutput",
    "SearchError",
    "StorageError",
    "DiskFull",
    "RunTimeout",
    "Cancelled",
    "__version__",
]
