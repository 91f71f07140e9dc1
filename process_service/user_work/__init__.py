"""The user's own work in the hub (issue 21 part 2, seed 001 §4): documents, scratchpad, facts,
web search and fetch, and scripts in a sandboxed workspace, each scoped to its user."""
