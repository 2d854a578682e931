"""The benchmark as an inspect_ai task (`task`), the agent tiers' tools, agent and trace inside
inspect (`agent`), and an eval log of the task imported as a run folder. Its modules import
inspect_ai (the `inspect` extra), so this package imports none of them itself."""
