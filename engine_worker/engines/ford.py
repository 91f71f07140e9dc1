"""Ford: the generalist worker. Works on its goal and reports the result to its parent."""

from __future__ import annotations

from engine_worker.context import ThinkEngineContext
from engine_worker.engine import TurnOutcome
from engine_worker.engines.common import history_to_llm, inbox_to_llm
from vance.domain import ChatRole, ThinkProcess

FALLBACK_PROMPT = "You are Ford, a careful worker. Do the task and answer with the result."


class Ford:
    name = "ford"
    title = "Ford Worker"
    description = "Generalist worker: works a goal with its tools and reports back."
    version = "1.0.0"

    async def start(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome:
        if process.goal:
            await ctx.chat.append(ChatRole.USER, process.goal)
        return await self._turn(process, ctx)

    async def resume(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome:
        return await self._turn(process, ctx)

    async def steer(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome:
        return await self._turn(process, ctx)

    def summarize_for_parent(self, process: ThinkProcess, outcome: TurnOutcome) -> str:
        return outcome.close_detail or f"{process.name} {outcome.status.value.lower()}"

    async def _turn(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome:
        inbox = await ctx.drain_pending()
        history = await ctx.chat.history()
        turn_input = [inbox_to_llm(m) for m in inbox]
        prompt = str(process.recipe_snapshot.get("prompt") or FALLBACK_PROMPT)
        messages = [{"role": "system", "content": prompt}, *history_to_llm(history), *turn_input]
        reply = await ctx.llm.complete(
            tier=str(ctx.settings.get("model", "default:analyze")),
            messages=messages,
            on_chunk=ctx.events.chunk,
        )
        await ctx.chat.append(ChatRole.ASSISTANT, reply.text)
        return TurnOutcome.done(reply.text)
