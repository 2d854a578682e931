"""The ways in: each front-end translates its world into the same core calls and holds no logic
of its own. `cli` (the `peb` command: argv), `workbench` (what the marimo notebooks decide and
show, the Run form and its headless flags, and serving them), `inspect` (the benchmark as an
inspect_ai task, its agents and tools, and an eval log imported as a run; the `inspect` extra)
and `mcp` (the agent tiers' tools served to any MCP client; the `mcp` extra). Nothing below this
package imports it."""
