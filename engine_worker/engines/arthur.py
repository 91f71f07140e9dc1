"""Arthur: the reactive session chat engine (seed 000 §3). Never DONE; IDLE or BLOCKED."""

from __future__ import annotations

import logging

from engine_worker.context import ThinkEngineContext
from engine_worker.engine import TurnOutcome
from engine_worker.engines.common import history_to_llm, inbox_to_llm
from vance.domain import ChatRole, ThinkProcess, UserChatInput
from vance.llm import ModelNotConfiguredError

logger = logging.getLogger(__name__)

WELCOME = "Hi, I'm Arthur. How can I help?"
FALLBACK_PROMPT = "You are Arthur, the session chat assistant of Vancetope."


class Arthur:
    name = "arthur"
    title = "Arthur Session Chat"
    description = "Reactive session chat: talks with the user and delegates deep work to workers."
    version = "1.0.0"

    async def start(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome:
        await ctx.chat.append(ChatRole.ASSISTANT, WELCOME)
        return await self._turn(process, ctx)

    async def resume(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome:
        return await self._turn(process, ctx)

    async def steer(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome:
        return await self._turn(process, ctx)

    def summarize_for_parent(self, process: ThinkProcess, outcome: TurnOutcome) -> str:
        return f"chat {process.name} is {outcome.status.value.lower()}"

    async def _turn(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome:
        inbox = await ctx.drain_pending()
        if not inbox:
            return TurnOutcome.idle()
        history = await ctx.chat.history(limit=int(ctx.settings.get("historyLimit", 200)))
        turn_input = []
        for message in inbox:
            if isinstance(message, UserChatInput):
                await ctx.chat.append(ChatRole.USER, message.content)
            turn_input.append(inbox_to_llm(message))
        prompt = str(process.recipe_snapshot.get("prompt") or FALLBACK_PROMPT)
        messages = [{"role": "system", "content": prompt}, *history_to_llm(history), *turn_input]
        try:
            reply = await ctx.llm.complete(
                tier=str(ctx.settings.get("model", "default:chat")),
                messages=messages,
                on_chunk=ctx.events.chunk,
            )
        except ModelNotConfiguredError as exc:
            await ctx.chat.append(ChatRole.SYSTEM, exc.message, {"error": exc.reason})
            return TurnOutcome.idle()
        await ctx.chat.append(ChatRole.ASSISTANT, reply.text)
        return TurnOutcome.idle()
