"""Plan mode for Arthur and Eddie (docs/architecture.md "Plan mode"): the model may end a turn
with `plan_propose{title, steps}` instead of answering; the plan is stored and shown
(process_service/lifecycle/plans.py publishes `plan-proposed`), the process waits BLOCKED for the user's
decision, which arrives as an EXTERNAL_COMMAND `plan-decision`; on approval the model executes
the todo list, marking each todo with `todo_update`.

Names follow the reference's Plan Mode actions (PROPOSE_PLAN, TODO_UPDATE): `plan_propose`
is an action (it ends the turn, like `respond`), `todo_update` an ordinary tool; START_PLAN and
START_EXECUTION need no tool of their own here, as proposing enters plan mode and the user's
approval starts the execution."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine_worker.context import ThinkEngineContext
from engine_worker.engines.loop import (
    RESPOND,
    RESPOND_STREAMED,
    RESPOND_TOOL,
    Answer,
    _respond_args,
    run_action_loop,
)
from engine_worker.json_types import JsonObject, ModelMessage, ModelTool
from engine_worker.tools import ToolSpec
from vance.domain import ExternalCommand, SteerMessage

PLAN_PROPOSE = "plan_propose"
DECISION_COMMAND = "plan-decision"  # process_service/lifecycle/plans.py
# Tools of plan mode: todo_update for the model, plan_store for the engine only.
PLAN_TOOLS = ["todo_update", "plan_store"]
INTERNAL = frozenset({"plan_store"})
MAX_STEPS = 20

PLAN_PROPOSE_TOOL: ModelTool = {
    "type": "function",
    "function": {
        "name": PLAN_PROPOSE,
        "description": (
            "For a request that needs several steps: propose a plan and wait for the user to "
            "approve, edit or reject it, instead of acting at once. steps: 1-20 short steps, "
            "each a string or {text, project} (project: a project the step is delegated to). "
            "After approval you execute it with todo_update. End your turn with it, alone in "
            "its step."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "steps": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": MAX_STEPS,
                    "items": {
                        "anyOf": [
                            {"type": "string"},
                            {
                                "type": "object",
                                "properties": {
                                    "text": {"type": "string"},
                                    "project": {"type": "string"},
                                },
                                "required": ["text"],
                            },
                        ]
                    },
                },
            },
            "required": ["title", "steps"],
        },
    },
}


@dataclass
class PlanProposal:
    title: str
    steps: list[dict[str, str]] = field(default_factory=list)


def parse_plan(arguments: JsonObject) -> PlanProposal | str:
    title = arguments.get("title")
    if not isinstance(title, str) or not title.strip():
        return "plan_propose needs a non-empty 'title'"
    raw = arguments.get("steps")
    if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_STEPS:
        return f"'steps' must list 1 to {MAX_STEPS} steps"
    steps = []
    for step in raw:
        if isinstance(step, str) and step.strip():
            steps.append({"text": step.strip()})
        elif isinstance(step, dict) and isinstance(step.get("text"), str) and step["text"].strip():
            entry = {"text": step["text"].strip()}
            if isinstance(step.get("project"), str) and step["project"].strip():
                entry["project"] = step["project"].strip()
            steps.append(entry)
        else:
            return "every step needs a text"
    return PlanProposal(title.strip(), steps)


async def run_loop(
    ctx: ThinkEngineContext,
    messages: list[ModelMessage],
    pool: list[ToolSpec],
    *,
    tier: str,
    max_iterations: int,
) -> Answer | PlanProposal:
    """Arthur's tool loop with `respond` and `plan_propose` as the actions that end a turn."""
    name, result = await run_action_loop(
        ctx,
        messages,
        pool,
        tier=tier,
        max_iterations=max_iterations,
        action_tools=[RESPOND_TOOL, PLAN_PROPOSE_TOOL],
        parsers={RESPOND: _respond_args, PLAN_PROPOSE: parse_plan},
        streamed=RESPOND_STREAMED,
    )
    if name == PLAN_PROPOSE:
        proposal: PlanProposal = result
        return proposal
    if name:
        answer: Answer = result
        return answer
    return Answer(str(result), False, structured=False)


async def store(ctx: ThinkEngineContext, proposal: PlanProposal) -> JsonObject | str:
    """The plan stored and shown to the user's client; an error text when that failed."""
    result = await ctx.tools.invoke(
        "plan_store", {"title": proposal.title, "steps": proposal.steps}, "plan-propose"
    )
    if result.error or not isinstance(result.result, dict):
        return result.error or "the plan could not be stored"
    return dict(result.result)


def render(view: JsonObject) -> str:
    """The plan as Markdown, for the chat."""
    lines = [f"**Plan: {view.get('title') or 'Plan'}**", ""]
    for i, step in enumerate(view.get("steps") or [], 1):
        project = f" _(project {step['project']})_" if step.get("project") else ""
        lines.append(f"{i}. {step['text']}{project}")
    lines += ["", "Approve, edit or reject the plan."]
    return "\n".join(lines)


def plan_meta(view: JsonObject) -> JsonObject:
    return {
        "action": PLAN_PROPOSE,
        "planId": view.get("planId"),
        "plan": {"title": view.get("title"), "steps": view.get("steps") or []},
    }


def is_decision(message: SteerMessage) -> bool:
    return isinstance(message, ExternalCommand) and message.command == DECISION_COMMAND


def decision_texts(command: ExternalCommand) -> tuple[str, str]:
    """(what the chat shows as the user's act, what the model reads)."""
    p = command.params
    decision, title = str(p.get("decision") or ""), str(p.get("title") or "the plan")
    comment = str(p.get("comment") or "").strip()
    said = {
        "approve": "Approved the plan.",
        "edit": "Approved the plan with changes.",
        "reject": "Rejected the plan.",
    }.get(decision, f"{decision} the plan.")
    if comment:
        said += f" {comment}"
    if decision == "reject":
        model = (
            f'<plan-rejected planId="{p.get("planId")}">The user rejected the plan "{title}".'
            f"{' Their comment: ' + comment if comment else ''} Do not execute it. Answer "
            "briefly, or propose a different plan if the comment asks for one.</plan-rejected>"
        )
        return said, model
    todos = "\n".join(
        f"- {s.get('id')}: {s.get('text')}"
        + (f" (delegate to project {s['project']})" if s.get("project") else "")
        for s in p.get("steps") or []
        if isinstance(s, dict)
    )
    model = (
        f'<plan-approved planId="{p.get("planId")}">The user approved the plan "{title}"'
        f"{' with changes' if decision == 'edit' else ''}. Execute it now, in order: call "
        "todo_update with status in_progress when you start a todo and done when it is "
        "finished (skipped when it turns out not to be needed), then give your answer.\n"
        f"Todos:\n{todos}{chr(10) + 'Comment: ' + comment if comment else ''}</plan-approved>"
    )
    return said, model
