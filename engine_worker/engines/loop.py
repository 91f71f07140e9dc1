"""The tool loop engines share: call the model with tools until it answers with `respond`."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine_worker.context import ThinkEngineContext
from engine_worker.json_types import JsonObject, ModelMessage, ModelTool
from engine_worker.tools import ToolSpec
from vance.llm import StreamedArgs

logger = logging.getLogger(__name__)

RESPOND = "respond"
RESPOND_TOOL: ModelTool = {
    "type": "function",
    "function": {
        "name": RESPOND,
        "description": (
            "End your turn with your message to the user. Call it alone, never together with "
            "other tools. awaiting_user_input: true when you asked a question and need the "
            "answer before you can go on. options: 2-4 choices when the answer is one of them."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "message": {"type": "string"},
                "awaiting_user_input": {"type": "boolean", "default": True},
                "payload": {
                    "type": "object",
                    "description": "Structured result for the process that started you, if any.",
                },
                "options": {
                    "type": "array",
                    "minItems": 2,
                    "maxItems": 4,
                    "items": {
                        "type": "object",
                        "properties": {
                            "label": {"type": "string"},
                            "description": {"type": "string"},
                        },
                        "required": ["label"],
                    },
                },
            },
            "required": ["message"],
        },
    },
}
# `respond`'s message streams to the client as the model writes it (vance/llm_core.py).
RESPOND_STREAMED: StreamedArgs = {RESPOND: "message"}
ALONE_ERROR = (
    "respond must stand alone in its step. The other tools ran; read their results, then call "
    "respond again on its own."
)
# An action tool's arguments -> the parsed action, or an error text the model can act on. The
# action's type is the parser's (Answer, eddie_actions.Action, plan_mode.PlanProposal): `Any`,
# since the caller knows it by the tool's name, which a type cannot carry.
ActionParser = Callable[[JsonObject], Any]


def alone_error(name: str) -> str:
    return ALONE_ERROR.replace("respond", name)


@dataclass
class Answer:
    message: str
    awaiting_user_input: bool
    options: list[dict[str, str]] = field(default_factory=list)
    structured: bool = True  # False: a plain-text answer without `respond`
    payload: JsonObject = field(default_factory=dict)  # for a worker's parent

    def rendered(self) -> tuple[str, JsonObject]:
        """The chat text (options as a Markdown list) and the message meta."""
        if not self.options:
            return self.message, {}
        lines = [self.message, ""]
        for i, opt in enumerate(self.options, 1):
            desc = f" — {opt['description']}" if opt.get("description") else ""
            lines.append(f"{i}. **{opt['label']}**{desc}")
        return "\n".join(lines), {"options": self.options}


def _respond_args(arguments: JsonObject) -> Answer | str:
    message = arguments.get("message")
    if not isinstance(message, str) or not message.strip():
        return "respond needs a non-empty 'message'"
    awaiting = arguments.get("awaiting_user_input", True)
    if not isinstance(awaiting, bool):
        return "'awaiting_user_input' must be true or false"
    options_raw = arguments.get("options") or []
    if options_raw and (not isinstance(options_raw, list) or not 2 <= len(options_raw) <= 4):
        return "'options' must list 2 to 4 choices"
    options = []
    for opt in options_raw:
        if not isinstance(opt, dict) or not isinstance(opt.get("label"), str):
            return "every option needs a 'label'"
        entry = {"label": opt["label"]}
        if isinstance(opt.get("description"), str):
            entry["description"] = opt["description"]
        options.append(entry)
    payload = arguments.get("payload") or {}
    if not isinstance(payload, dict):
        return "'payload' must be an object"
    return Answer(message.strip(), awaiting, options, payload=payload)


async def run_tool_loop(
    ctx: ThinkEngineContext,
    messages: list[ModelMessage],
    pool: list[ToolSpec],
    *,
    tier: str,
    max_iterations: int,
) -> Answer:
    name, result = await run_action_loop(
        ctx,
        messages,
        pool,
        tier=tier,
        max_iterations=max_iterations,
        action_tools=[RESPOND_TOOL],
        parsers={RESPOND: _respond_args},
        streamed=RESPOND_STREAMED,
    )
    if name:
        answer: Answer = result
        return answer
    return Answer(str(result), False, structured=False)


async def run_action_loop(
    ctx: ThinkEngineContext,
    messages: list[ModelMessage],
    pool: list[ToolSpec],
    *,
    tier: str,
    max_iterations: int,
    action_tools: list[ModelTool],
    parsers: Mapping[str, ActionParser],
    streamed: StreamedArgs | None = None,
    refused: Mapping[str, str] | None = None,
) -> tuple[str, Any]:  # (tool name, what its ActionParser returned)
    """The loop behind `respond` and Eddie's actions: the model gets the pool plus the action
    tools; tools run and their results go back; one action standing alone in its step ends the
    turn as `(action name, parsed arguments)`. A plain-text reply ends it as `("", text)`.

    Only the tools offered can run: a name the model guesses (an engine's internal tool such as
    `hub_switch_to`, whose checks the engine makes before it calls it) gets an error result and
    is never invoked. `refused` names offered tools the model may not use on this turn, with the
    reason it is told (Eddie: no spawn on a turn that carries only events).
    `streamed` names the action arguments that go to the client as chunks while the model
    writes them; the final chat message is the parsed action's, as without streaming."""
    tools = [t.for_model() for t in pool] + action_tools
    refused = refused or {}
    for _ in range(max(1, max_iterations)):
        reply = await ctx.llm.complete(
            tier=tier,
            messages=messages,
            tools=tools,
            on_chunk=ctx.events.chunk,
            stream_args=streamed,
        )
        if not reply.tool_calls:
            return "", reply.text.strip()
        messages.append(
            {
                "role": "assistant",
                "content": reply.text or None,
                "tool_calls": [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {
                            "name": c.name,
                            "arguments": c.raw_arguments or json.dumps(c.arguments),
                        },
                    }
                    for c in reply.tool_calls
                ],
            }
        )
        actions = [c for c in reply.tool_calls if c.name in parsers]
        others = [c for c in reply.tool_calls if c.name not in parsers]
        for call in others:
            # Looked up in the pool only when the model calls a tool: a set of the pool's names
            # held through the model call was ~1 KiB per turn in flight (issue 28).
            if call.name in refused or all(t.name != call.name for t in pool):
                reason = refused.get(call.name) or f"unknown tool {call.name!r}; use one of yours"
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": call.id,
                        "content": json.dumps({"status": "ERROR", "error": reason}),
                    }
                )
                continue
            await ctx.events.progress("STATUS", {"tool": call.name, "state": "started"})
            result = await ctx.tools.invoke(call.name, call.arguments, call.id)
            await ctx.events.progress(
                "STATUS", {"tool": call.name, "state": result.status.value.lower()}
            )
            messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": result.for_model()}
            )
        if len(actions) == 1 and not others:
            parsed = parsers[actions[0].name](actions[0].arguments)
            if not isinstance(parsed, str):
                return actions[0].name, parsed
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": actions[0].id,
                    "content": json.dumps({"status": "ERROR", "error": parsed}),
                }
            )
            continue
        for call in actions:
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call.id,
                    "content": json.dumps({"status": "ERROR", "error": alone_error(call.name)}),
                }
            )
    logger.warning("no answer after %d model steps", max_iterations)
    return "", f"I could not finish within {max_iterations} steps."
