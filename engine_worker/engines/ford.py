"""Ford: the generalist worker. A tool loop on its goal; it asks (BLOCKED) or finishes (DONE).

Its history is cut by the token budget Arthur's is (`arthur.maxContextTokens`), the oldest
messages first, with the same note (engines/context_budget.py); it keeps notes with the memory
tools, searches documents with rag_query, and records what its own children finished in project
memory (engines/knowledge_turn.py)."""

from __future__ import annotations

from engine_worker.context import ThinkEngineContext
from engine_worker.engine import STOP_HOOK, SUSPEND_HOOK, EngineDefaults, TurnOutcome
from engine_worker.engines.arthur import DEFAULT_MAX_CONTEXT_TOKENS, MAX_CONTEXT_TOKENS
from engine_worker.engines.common import history_to_llm, inbox_to_llm_messages
from engine_worker.engines.context_budget import fit, history_limit
from engine_worker.engines.knowledge_turn import note_finished_children
from engine_worker.engines.loop import run_tool_loop
from vance.domain import ChatRole, ThinkProcess, UserChatInput

FALLBACK_PROMPT = "You are Ford, a careful worker. Do the task and answer with the result."
TOOLS = ["@memory", "rag_query"]


class Ford(EngineDefaults):
    name = "ford"
    title = "Ford Worker"
    description = "Generalist worker: works a goal with its tools and reports back."
    version = "1.0.0"
    # A worker cut off by a suspend or a stop keeps a note of where it was, in its working
    # memory: a resumed Ford (and whoever reads its memory) sees it.
    hooks = frozenset({SUSPEND_HOOK, STOP_HOOK})

    async def suspend(self, process: ThinkProcess, ctx: ThinkEngineContext) -> None:
        cause = process.last_suspend_cause or "unknown"
        await ctx.memory().record_turn(
            f"Suspended (cause {cause}) while working on: {process.goal}"
        )

    async def stop(self, process: ThinkProcess, ctx: ThinkEngineContext) -> None:
        reason = process.close_reason.value if process.close_reason else "STOPPED"
        await ctx.memory().record_turn(f"Closed ({reason}) before finishing: {process.goal}")

    async def start(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome:
        if process.goal:
            await ctx.chat.append(ChatRole.USER, process.goal)
        return await self._turn(process, ctx, starting=True)

    async def resume(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome:
        return await self._turn(process, ctx)

    async def steer(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome:
        return await self._turn(process, ctx)

    def summarize_for_parent(self, process: ThinkProcess, outcome: TurnOutcome) -> str:
        return outcome.close_detail or f"{process.name} {outcome.status.value.lower()}"

    async def _turn(
        self, process: ThinkProcess, ctx: ThinkEngineContext, *, starting: bool = False
    ) -> TurnOutcome:
        inbox = await ctx.drain_pending()
        budget = await ctx.settings_api().get_int(MAX_CONTEXT_TOKENS, DEFAULT_MAX_CONTEXT_TOKENS)
        limit = history_limit(budget)
        history = await ctx.chat.history(limit=limit)
        older_unread = len(history) >= limit
        if starting and process.goal:
            # The goal was appended this turn; the committed history does not hold it yet.
            history = [m for m in history if m.content != process.goal]
        turn_input = (
            [{"role": "user", "content": process.goal}] if starting and process.goal else []
        )
        for message in inbox:
            if isinstance(message, UserChatInput):
                await ctx.chat.append(ChatRole.USER, message.content)
            turn_input.extend(inbox_to_llm_messages(message))
        if not turn_input:
            return TurnOutcome.idle()
        await note_finished_children(ctx, inbox)
        prompt = str(process.recipe_snapshot.get("prompt") or FALLBACK_PROMPT)
        messages, _ = fit(
            {"role": "system", "content": prompt},
            history_to_llm(history),
            turn_input,
            budget,
            older_unread=older_unread,
        )
        answer = await run_tool_loop(
            ctx,
            messages,
            await ctx.tools.pool(TOOLS),
            tier=str(ctx.settings.get("model", "default:analyze")),
            max_iterations=int(ctx.settings.get("maxIterations", 12)),
        )
        text, meta = answer.rendered()
        await ctx.chat.append(ChatRole.ASSISTANT, text, meta)
        if answer.structured and answer.awaiting_user_input:
            return TurnOutcome.blocked(answer.message)
        return TurnOutcome.done(answer.message, answer.payload)
