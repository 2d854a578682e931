"""The agent tiers' tools over the Model Context Protocol (`server`; the `mcp` extra): `peb mcp
serve` lets any MCP client play a run's tasks. Its module imports the `mcp` SDK, so this package
imports nothing itself."""
