"""Names for the JSON the worker passes on as it is, so that each remaining `Any` in
engine_worker says which boundary it stands at (everything else is typed)."""

from __future__ import annotations

from typing import Any

# An OpenAI chat-completions message: vance/llm_core.py's ModelClient sends the engines' lists
# of them to the model as they are.
ModelMessage = dict[str, Any]
# A function tool offered to the model (an OpenAI "tools" entry with its JSON schema).
ModelTool = dict[str, Any]
# A JSON object read or written as it is: a model's tool-call arguments (vance/llm_core.py
# parse_arguments), a tool's result (tool_service), a chat message's meta, a progress or
# parent payload, a recipe's parameters.
JsonObject = dict[str, Any]
# Any JSON value (a tool's result, a recipe parameter's value).
Json = Any
