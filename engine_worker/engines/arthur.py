"""Arthur: the reactive session chat engine (seed 000 §3). Never DONE; IDLE or BLOCKED."""

from __future__ import annotations

import logging

from engine_worker.context import ThinkEngineContext
from engine_worker.engine import EngineDefaults, TurnOutcome
from engine_worker.engines import arthur_prompt, plan_mode
from engine_worker.engines.common import history_to_llm, inbox_to_llm_messages
from engine_worker.engines.context_budget import fit, history_limit
from engine_worker.engines.history_summary import Summary, roll
from engine_worker.engines.knowledge_turn import note_finished_children, turn_query, user_text
from engine_worker.json_types import JsonObject, ModelMessage
from vance.domain import (
    ChatMessage,
    ChatRole,
    ExternalCommand,
    ProcessStatus,
    SteerMessage,
    ThinkProcess,
    UserChatInput,
)
from vance.llm import ModelNotConfiguredError

logger = logging.getLogger(__name__)

WELCOME = "Hi, I'm Arthur. How can I help?"
FALLBACK_PROMPT = "You are Arthur, the session chat assistant of Vancetope."
# `@client`: the tools the user's client hosts (client_file_read, ...), for profiles that allow
# them (seed 001 §8.4: a user talking to Arthur directly lends it their machine).
TOOLS = [
    "process_*",
    "recipe_list",
    "recipe_describe",
    "manual_list",
    "manual_read",
    "how_do_i",
    "@memory",  # memory_remember, memory_recall, memory_forget
    "rag_query",
    "@client",
]
# Settings (session_service/settings/engine_settings.py) Arthur reads each turn.
MAX_CONTEXT_TOKENS = "arthur.maxContextTokens"
DEFAULT_MAX_CONTEXT_TOKENS = 64_000
INCLUDE_MEMORY = "arthur.includeProjectMemorySummary"
# The model of Arthur's turns, over the recipe's `model`: `<provider>/<model>`, or the model
# alone (a provider model or a tier alias) when no provider is set.
LLM_PROVIDER = "arthur.llmProvider"
LLM_MODEL = "arthur.llmModel"
CHAT_LANGUAGE = "chat.language"
FORCED_RESUME_NOTE = (
    '<resume cause="FORCED">The session was suspended by force while your last turn ran; '
    "that turn was cut off and its messages follow again. Tool calls it made may or may not "
    "have taken effect: check (e.g. process_list) before repeating them.</resume>"
)
# Client commands that need no model turn: the user clicked something with a clear meaning.
DIRECT_COMMANDS = {"steer", "approve", "reject"}


class Arthur(EngineDefaults):
    name = "arthur"
    title = "Arthur Session Chat"
    description = "Reactive session chat: talks with the user and delegates deep work to workers."
    version = "1.0.0"

    def default_settings(self) -> dict[str, str]:
        return {
            MAX_CONTEXT_TOKENS: str(DEFAULT_MAX_CONTEXT_TOKENS),
            INCLUDE_MEMORY: "true",
        }

    async def start(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome:
        await ctx.chat.append(ChatRole.ASSISTANT, WELCOME)
        return await self._turn(process, ctx)

    async def resume(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome:
        # A FORCED suspend cut a turn off mid-way (its messages are back in the inbox): the model
        # is told, so it checks what its earlier tool calls did instead of assuming.
        note = FORCED_RESUME_NOTE if process.last_suspend_cause == "FORCED" else None
        return await self._turn(process, ctx, note=note)

    async def steer(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome:
        return await self._turn(process, ctx)

    def summarize_for_parent(self, process: ThinkProcess, outcome: TurnOutcome) -> str:
        return f"chat {process.name} is {outcome.status.value.lower()}"

    async def _turn(
        self, process: ThinkProcess, ctx: ThinkEngineContext, *, note: str | None = None
    ) -> TurnOutcome:
        inbox = await ctx.drain_pending()
        if not inbox:
            return TurnOutcome.idle()
        pool = await ctx.tools.pool(TOOLS + plan_mode.PLAN_TOOLS)
        model_inbox: list[SteerMessage] = []
        for message in inbox:
            if isinstance(message, ExternalCommand) and message.command in DIRECT_COMMANDS:
                await self._dispatch(ctx, message)
            else:
                model_inbox.append(message)
        if not model_inbox:
            return TurnOutcome.idle()
        await note_finished_children(ctx, model_inbox)
        settings = ctx.settings_api()
        # Only the token budget cuts the history; reading more than `history_limit` messages
        # could never add one to the model input.
        budget = await settings.get_int(MAX_CONTEXT_TOKENS, DEFAULT_MAX_CONTEXT_TOKENS)
        limit = history_limit(budget)
        history = await ctx.chat.history(limit=limit)
        turn_input: list[ModelMessage] = []
        if note:
            turn_input.append({"role": "system", "content": note})
        for message in model_inbox:
            if isinstance(message, UserChatInput):
                await ctx.chat.append(ChatRole.USER, message.content, _user_meta(message))
            if isinstance(message, ExternalCommand) and plan_mode.is_decision(message):
                said, read = plan_mode.decision_texts(message)
                await ctx.chat.append(ChatRole.USER, said, {"planDecision": message.params})
                turn_input.append({"role": "user", "content": read})
                continue
            turn_input.extend(inbox_to_llm_messages(message))
        prompt = arthur_prompt.render(
            str(process.recipe_snapshot.get("prompt") or FALLBACK_PROMPT),
            await arthur_prompt.turn_context(
                ctx,
                include_memory=await settings.get_bool(INCLUDE_MEMORY, True),
                language=await settings.get_str(CHAT_LANGUAGE),
                query=turn_query(model_inbox),
                rag_query=user_text(model_inbox),
            ),
        )
        messages, summary = fit_with_summary(
            {"role": "system", "content": prompt},
            history,
            turn_input,
            budget,
            Summary(process.chat_history_summary, process.chat_history_summary_through),
            older_unread=len(history) >= limit,
        )
        try:
            answer = await plan_mode.run_loop(
                ctx,
                messages,
                [t for t in pool if t.name not in plan_mode.INTERNAL],
                tier=await _model(ctx),
                max_iterations=int(ctx.settings.get("maxIterations", 8)),
            )
        except ModelNotConfiguredError as exc:
            await ctx.chat.append(ChatRole.SYSTEM, exc.message, {"error": exc.reason})
            return TurnOutcome.idle()
        if isinstance(answer, plan_mode.PlanProposal):
            return await self._propose(ctx, answer)
        text, meta = answer.rendered()
        await ctx.chat.append(ChatRole.ASSISTANT, text, meta)
        if answer.structured and answer.awaiting_user_input:
            # The options travel on the BLOCKED event, so an observer (Eddie) can relay the
            # question with the same choices.
            relayable = {"options": answer.options} if answer.options else {}
            outcome = TurnOutcome(
                ProcessStatus.BLOCKED,
                summary=answer.message,
                payload={"relayableActionParams": relayable} if relayable else {},
            )
        else:
            # The answer is what an observer of this chat learns when the turn ends.
            outcome = TurnOutcome(ProcessStatus.IDLE, summary=answer.message)
        if summary.through > process.chat_history_summary_through:
            outcome.chat_history_summary = summary.text
            outcome.chat_history_summary_through = summary.through
        return outcome

    async def _propose(
        self, ctx: ThinkEngineContext, proposal: plan_mode.PlanProposal
    ) -> TurnOutcome:
        """Plan mode: the plan is stored and shown; the process waits for the user's decision."""
        view = await plan_mode.store(ctx, proposal)
        if isinstance(view, str):
            text = f"I could not put the plan forward: {view}"
            await ctx.chat.append(ChatRole.ASSISTANT, text)
            return TurnOutcome(ProcessStatus.IDLE, summary=text)
        await ctx.chat.append(ChatRole.ASSISTANT, plan_mode.render(view), plan_mode.plan_meta(view))
        summary = f"Plan proposed: {view.get('title')}. Approve, edit or reject it."
        return TurnOutcome(
            ProcessStatus.BLOCKED, summary=summary, payload={"planId": view.get("planId")}
        )

    async def _dispatch(self, ctx: ThinkEngineContext, command: ExternalCommand) -> None:
        """E.g. an Approve button: forwarded to its target without a model turn."""
        params: JsonObject = command.params
        target = str(params.get("target") or params.get("processName") or "")
        content = str(params.get("content") or command.command)
        result = await ctx.tools.invoke(
            "process_steer", {"name": target, "content": content}, f"cmd-{command.id}"
        )
        note = f"{command.command} -> {target}: {result.status.value.lower()}"
        if result.error:
            note += f" ({result.error})"
        await ctx.chat.append(ChatRole.SYSTEM, note, {"command": command.command})


async def _model(ctx: ThinkEngineContext) -> str:
    settings = ctx.settings_api()
    model = (await settings.get_str(LLM_MODEL)).strip()
    if not model:
        return str(ctx.settings.get("model", "default:chat"))
    provider = (await settings.get_str(LLM_PROVIDER)).strip()
    if provider and not model.startswith(f"{provider}/"):
        return f"{provider}/{model}"
    return model


def _user_meta(message: UserChatInput) -> JsonObject:
    """Words the hub passed on carry the hop (seed 001 §7.3), and an answer its question."""
    meta: JsonObject = {}
    if message.forwarded_by:
        meta["forwardedBy"] = message.forwarded_by
    if message.ask_id:
        meta["askId"] = message.ask_id
    return meta


def fit_with_summary(
    system: ModelMessage,
    history: list[ChatMessage],
    turn_input: list[ModelMessage],
    budget: int,
    previous: Summary,
    *,
    older_unread: bool,
) -> tuple[list[ModelMessage], Summary]:
    """Fits the history into the budget; what is cut rolls into the summary, which the note
    carries. A longer note can cut one more message, so this settles in a few rounds."""
    llm_history = history_to_llm(history)
    summary = previous
    messages, cut = fit(
        system, llm_history, turn_input, budget, summary=summary.text, older_unread=older_unread
    )
    for _ in range(3):
        rolled = roll(previous, history[:cut])
        if rolled == summary:
            break
        summary = rolled
        messages, cut = fit(
            system, llm_history, turn_input, budget, summary=summary.text, older_unread=older_unread
        )
    return messages, summary
