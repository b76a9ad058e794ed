"""research-agent: research a question and write a cited, self-critiqued markdown report.

    from research_agent import research, research_sync, ResearchResult
    result = research_sync("How does PostgreSQL VACUUM reclaim space?")
    print(result.report_path)
"""

from typing import TYPE_CHECKING

from .errors import (
    AmbiguousRun,
    BrowserTimeout,
    Busy,
    Cancelled,
    ConfigError,
    ContextExceeded,
    CpuWorkFailed,
    DiskFull,
    EndpointUnreachable,
    IndexBusy,
    InputError,
    InvalidCritique,
    InvalidModelOutput,
    LLMError,
    LLMTimeout,
    LLMUnavailable,
    Locked,
    ModelNotFound,
    ProviderError,
    RateLimited,
    RequestRefused,
    ResearchError,
    RunTimeout,
    SearchError,
    StorageError,
    UnknownRun,
    UnreadableAnswer,
    UnsafeFile,
    UnsafeYaml,
)
from .lazy import lazy_names

if TYPE_CHECKING:  # what the type checker sees of the lazy names below
    from .config import MODES, Mode, Settings, load_settings
    from .llm import ChatModel, ChatRequest, ChatResponse, Usage
    from .pipeline import Iteration, ResearchResult, SourceSummary, research, research_sync
    from .version import __version__

# Everything else is imported on first use: the command line starts without the run and
# the model protocol for every command but ``run`` (which imports them itself), and an
# extraction worker process, which imports this package to reach ``research_agent.fetch``,
# needs none of it (settings, the version's package metadata).
_LAZY = {
    "research": "pipeline",
    "research_sync": "pipeline",
    "ResearchResult": "pipeline",
    "SourceSummary": "pipeline",
    "Iteration": "pipeline",
    "ChatModel": "llm",
    "ChatRequest": "llm",
    "ChatResponse": "llm",
    "Usage": "llm",
    "Settings": "config",
    "Mode": "config",
    "MODES": "config",
    "load_settings": "config",
    "__version__": "version",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())

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
    # the exception tree (research_agent.errors): every ResearchError
    "ResearchError",
    "ConfigError",
    "InputError",
    "UnsafeFile",
    "UnsafeYaml",
    "InvalidCritique",
    "UnknownRun",
    "AmbiguousRun",
    "RequestRefused",
    "LLMError",
    "LLMUnavailable",
    "EndpointUnreachable",
    "LLMTimeout",
    "ModelNotFound",
    "UnreadableAnswer",
    "ContextExceeded",
    "InvalidModelOutput",
    "SearchError",
    "ProviderError",
    "RateLimited",
    "StorageError",
    "DiskFull",
    "Locked",
    "IndexBusy",
    "BrowserTimeout",
    "RunTimeout",
    "Cancelled",
    "Busy",
    "CpuWorkFailed",
    "__version__",
]
