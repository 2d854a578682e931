"""Systems: anything that turns a view of a task into a Reply. The deterministic baselines (the
agent baselines among them, over the access layer's tools), the litellm model system with its
prompt protocols, response schema and reply cache, the embedded models, and `build_system`,
which makes any of them from a name."""

from ..tasks import response_model
from ._agent_baselines import AGENT_BASELINES, AgentBaseline, TextReader, reader_for
from ._baselines import BASELINES, Baseline, System
from ._build import SystemSpecError, build_system
from ._cache import ResponseCache, cache_dir, cache_key
from ._defaults import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_PROTOCOL,
    DEFAULT_TEMPERATURE,
    DEFAULT_TIMEOUT_S,
)
from ._local import (
    REGISTRY,
    LocalModel,
    LocalModelError,
    get_local,
    local_status,
    serve_local,
    stop_local,
)
from ._model import ModelSystem, clean_reply, redact_url, system_name
from ._prompts import PROTOCOLS, PromptProtocol, get_protocol
from ._reply import RECORD_FORMAT, Reply, Response, ResponseRecord, Step, ToolCall, Usage
from ._schema import response_format

__all__ = [
    "AGENT_BASELINES",
    "BASELINES",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_PROTOCOL",
    "DEFAULT_TEMPERATURE",
    "DEFAULT_TIMEOUT_S",
    "PROTOCOLS",
    "RECORD_FORMAT",
    "REGISTRY",
    "AgentBaseline",
    "Baseline",
    "LocalModel",
    "LocalModelError",
    "ModelSystem",
    "PromptProtocol",
    "Reply",
    "Response",
    "ResponseCache",
    "ResponseRecord",
    "Step",
    "System",
    "SystemSpecError",
    "TextReader",
    "ToolCall",
    "Usage",
    "build_system",
    "cache_dir",
    "cache_key",
    "clean_reply",
    "get_local",
    "get_protocol",
    "local_status",
    "reader_for",
    "redact_url",
    "response_format",
    "response_model",
    "serve_local",
    "stop_local",
    "system_name",
]
