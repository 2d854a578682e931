"""The agent tiers' tools over the Model Context Protocol (`server`; the `mcp` extra): `peb mcp
serve` lets any MCP client play a run's tasks. Its module imports the `mcp` SDK, so this package
imports nothing itself."""

DEFAULT_PORT = 8790
"""Where `peb mcp serve --transport http` listens on 127.0.0.1 unless told (apart from the
embedded models' ports, 8765 and 8766)."""
