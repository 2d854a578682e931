"""Systems: anything that turns a view of a task into a Reply. The deterministic baselines (the
agent baselines among them, over the access layer's tools), the litellm model system with its
prompt protocols, response schema and reply cache, the agent system (a tool-calling loop through
the same request path), the embedded models, and `build_system`, which makes any of them from a
name. Every agent episode is recorded by `Episode`."""

from ..tasks import response_model
from ._agent import AGENT_PREFIX, DEFAULT_MAX_STEPS, DEFAULT_TOKEN_BUDGET, AgentSystem
from ._agent_baselines import AGENT_BASELINES, AgentBaseline, TextReader, reader_for
from ._baselines import BASELINES, Baseline, System, register_baseline
from ._build import (
    CHAT_BASELINES,
    SystemSpecError,
    build_system,
    chat_baseline,
    is_agent,
    is_embedded,
    sub_agent,
)
from ._cache import ResponseCache, cache_dir, cache_key
from ._defaults import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_PROTOCOL,
    DEFAULT_TEMPERATURE,
    DEFAULT_TIMEOUT_S,
)
from ._delegation import REQUESTERS, SUB_AGENTS
from ._episode import Episode, followup_config
from ._handoffs import Handoffs
from ._local import (
    REGISTRY,
    Hold,
    LocalModel,
    LocalModelError,
    Serving,
    get_local,
    get_server,
    hold_local,
    local_servers,
    local_status,
    release_held,
    serve_local,
    status_line,
    stop_local,
    with_tools,
)
from ._model import LitellmSystem, ModelSystem, clean_reply, redact_url, system_name
from ._prompts import (
    PROTOCOLS,
    PromptProtocol,
    agent_reminder,
    get_protocol,
    register_protocol,
    tool_sentence,
)
from ._prose_model import ProseReaderError, model_read_prose, prose_reading_schema
from ._reach import MAX_UNREACHABLE, Reach, watching_reach
from ._repeat import MAX_REPEATS, answering_repeat, current_repeat
from ._reply import (
    MAX_KEPT_ARGUMENTS,
    MAX_KEPT_MESSAGE,
    MAX_KEPT_NAME,
    MAX_KEPT_RESULT,
    MAX_REPLY_CHARS,
    RECORD_FORMAT,
    Delegation,
    Platform,
    Reply,
    ReplyStatus,
    Response,
    ResponseRecord,
    Step,
    ToolCall,
    Usage,
    kept,
)
from ._schema import response_format
from ._steps import StepHook, step_started, watching_steps

__all__ = [
    "AGENT_BASELINES",
    "AGENT_PREFIX",
    "BASELINES",
    "CHAT_BASELINES",
    "DEFAULT_MAX_STEPS",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_PROTOCOL",
    "DEFAULT_TEMPERATURE",
    "DEFAULT_TIMEOUT_S",
    "DEFAULT_TOKEN_BUDGET",
    "MAX_KEPT_ARGUMENTS",
    "MAX_KEPT_MESSAGE",
    "MAX_KEPT_NAME",
    "MAX_KEPT_RESULT",
    "MAX_REPEATS",
    "MAX_REPLY_CHARS",
    "MAX_UNREACHABLE",
    "PROTOCOLS",
    "RECORD_FORMAT",
    "REGISTRY",
    "REQUESTERS",
    "SUB_AGENTS",
    "AgentBaseline",
    "AgentSystem",
    "Baseline",
    "Delegation",
    "Episode",
    "Handoffs",
    "Hold",
    "LitellmSystem",
    "LocalModel",
    "LocalModelError",
    "ModelSystem",
    "Platform",
    "PromptProtocol",
    "ProseReaderError",
    "Reach",
    "Reply",
    "ReplyStatus",
    "Response",
    "ResponseCache",
    "ResponseRecord",
    "Serving",
    "Step",
    "StepHook",
    "System",
    "SystemSpecError",
    "TextReader",
    "ToolCall",
    "Usage",
    "agent_reminder",
    "answering_repeat",
    "build_system",
    "cache_dir",
    "cache_key",
    "chat_baseline",
    "clean_reply",
    "current_repeat",
    "followup_config",
    "get_local",
    "get_protocol",
    "get_server",
    "hold_local",
    "is_agent",
    "is_embedded",
    "kept",
    "local_servers",
    "local_status",
    "model_read_prose",
    "prose_reading_schema",
    "reader_for",
    "redact_url",
    "register_baseline",
    "register_protocol",
    "release_held",
    "response_format",
    "response_model",
    "serve_local",
    "status_line",
    "step_started",
    "stop_local",
    "sub_agent",
    "system_name",
    "tool_sentence",
    "watching_reach",
    "watching_steps",
    "with_tools",
]
