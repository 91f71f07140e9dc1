"""Eddie: the user's personal hub (docs/architecture.md "Engines"). A chat engine like Arthur,
in the user's SYSTEM project, that ends every turn with one action (answer, ask_user, relay,
relay_inbox, mediate: engines/eddie_actions.py) and coordinates projects through the hub tools
(process_service/hub/tools.py). Its persona, prompt, parameters and tool cut are the engine's
own (BUNDLED below), not a recipe's."""

from __future__ import annotations

import logging

from engine_worker.context import ThinkEngineContext
from engine_worker.engine import PEER_HOOK, EngineDefaults, TurnOutcome
from engine_worker.engines import eddie_actions as a
from engine_worker.engines import eddie_asks, eddie_guards, eddie_peers, plan_mode
from engine_worker.engines.common import history_to_llm, inbox_to_llm, process_event_text
from engine_worker.engines.context_budget import fit_history
from engine_worker.engines.eddie_hub import HubContext
from engine_worker.engines.eddie_voice import BUNDLED_RULES, system_prompt
from engine_worker.engines.eddie_work import WORK_TOOLS
from engine_worker.engines.loop import run_action_loop
from engine_worker.json_types import Json, JsonObject, ModelMessage
from vance.domain import (
    ChatMessage,
    ChatRole,
    ExternalCommand,
    ProcessEvent,
    ProcessEventType,
    ProcessStatus,
    ThinkProcess,
    UserChatInput,
)
from vance.llm import ModelNotConfiguredError
from vance.profiles import capabilities

logger = logging.getLogger(__name__)

WELCOME = "Hi, I'm Eddie. What can I do for you?"
# The engine's bundled configuration: what a recipe gives other engines.
BUNDLED: JsonObject = {
    "params": {"model": "default:chat", "maxIterations": 8, "historyLimit": 60},
    "tools": [
        "process_create",
        "process_list",
        "process_status",
        "process_stop",
        "recipe_list",
        "@organizational",
        *WORK_TOOLS,  # the user's own work (engines/eddie_work.py)
        "todo_update",
    ],
}
# Hub tools the engine calls itself; the model never sees them (nor can it call them:
# engines/loop.py runs only the tools offered).
INTERNAL_TOOLS = {
    "hub_switch_to",
    "hub_context",
    "hub_voice_rules_store",
    "hub_ask_open",
    "hub_asks",
    eddie_peers.RECORD_TOOL,
    *plan_mode.INTERNAL,
}
BOOTSTRAP_PROMPT = (
    "What speech conventions should a voice chat agent observe in the language with the code "
    "{lang}? List 5-8 specific rules, each with a short example. Output format: Markdown."
)
STARTED = ProcessEventType.STARTED
CANNOT_MEDIATE = "I can't hand you over on this device, so I'll keep passing things on for you."


def _setting(ctx: ThinkEngineContext, key: str) -> Json:
    return ctx.settings.get(key, BUNDLED["params"].get(key))


def _event_text(m: ProcessEvent) -> str:
    """The event as the model reads it, with a blocked worker's options."""
    text = process_event_text(m, with_payload=False)
    if m.payload.get("project"):
        mode = m.payload.get("channelMode") or "milestones"
        text = f"[project {m.payload['project']}, mode {mode}] {text}"
    options = eddie_asks.options_of(m)
    if m.type is ProcessEventType.BLOCKED:
        text += f'\naskId="{eddie_asks.ask_id_of(m)}"'
    if options:
        text += "\nOptions: " + "; ".join(o["label"] for o in options)
    return text


class Eddie(EngineDefaults):
    name = "eddie"
    title = "Eddie Hub"
    description = "The user's personal hub: talks briefly, creates and watches projects."
    version = "1.0.0"
    # A suspended hub woken by a peer event takes it into its chat (engines/eddie_peers.py).
    hooks = frozenset({PEER_HOOK})

    async def start(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome:
        await ctx.chat.append(ChatRole.ASSISTANT, WELCOME, {"action": a.ANSWER})
        return await self._turn(process, ctx, opening="new")

    async def resume(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome:
        return await self._turn(process, ctx, opening="resumed")

    async def peer(self, process: ThinkProcess, ctx: ThinkEngineContext) -> None:
        """Suspended, woken by peer events: they go into the chat as system lines, nobody is
        spoken to, and the status stays SUSPENDED (a PEER hook)."""
        peers, _ = eddie_peers.split(await ctx.drain_pending())
        if peers:
            history = await ctx.chat.history(limit=int(_setting(ctx, "historyLimit")))
            await eddie_peers.record(ctx, peers, history)

    async def steer(self, process: ThinkProcess, ctx: ThinkEngineContext) -> TurnOutcome:
        return await self._turn(process, ctx)

    def summarize_for_parent(self, process: ThinkProcess, outcome: TurnOutcome) -> str:
        return f"hub {process.name} is {outcome.status.value.lower()}"

    async def _turn(
        self, process: ThinkProcess, ctx: ThinkEngineContext, opening: str = ""
    ) -> TurnOutcome:
        inbox = await ctx.drain_pending()
        if not inbox and not opening:
            return TurnOutcome.idle()
        pool = await ctx.tools.pool(BUNDLED["tools"] + sorted(INTERNAL_TOOLS))
        history: list[ChatMessage] | None = None
        hub: HubContext | None = None
        peers, inbox = eddie_peers.split(inbox)
        if peers or opening:
            history = await ctx.chat.history(limit=int(_setting(ctx, "historyLimit")))
            await eddie_peers.record(ctx, peers, history)
        if opening and history is not None:
            hub = await self._hub_context(ctx)
            await eddie_peers.recap(ctx, hub, history, new=opening == "new")
        # An answer to a worker's question goes to that worker (engines/eddie_asks.py).
        inbox, asks = await eddie_asks.route(ctx, inbox)
        if not inbox:
            return TurnOutcome.idle()
        started = [m for m in inbox if isinstance(m, ProcessEvent) and m.type is STARTED]
        if len(started) == len(inbox):
            # A milestone worth a line in the chat, not a model turn or a spoken sentence.
            for m in started:
                note = f"{m.payload.get('project') or m.source_process_name} started."
                await ctx.chat.append(ChatRole.SYSTEM, note, {"milestone": "started"})
            return TurnOutcome.idle()
        if history is None or peers or opening:  # what this turn appended so far, too
            history = await ctx.chat.history(limit=int(_setting(ctx, "historyLimit")))
        events: list[ProcessEvent] = []
        turn_input: list[ModelMessage] = []
        for message in inbox:
            if isinstance(message, UserChatInput):
                await ctx.chat.append(ChatRole.USER, message.content)
                turn_input.append(inbox_to_llm(message))
            elif isinstance(message, ProcessEvent):
                await self._summarise(ctx, message)
                await eddie_asks.open_ask(ctx, message)
                await eddie_peers.tell_blocked(ctx, message)
                events.append(message)
                turn_input.append({"role": "user", "content": _event_text(message)})
            elif isinstance(message, ExternalCommand) and plan_mode.is_decision(message):
                said, read = plan_mode.decision_texts(message)
                await ctx.chat.append(ChatRole.USER, said, {"planDecision": message.params})
                turn_input.append({"role": "user", "content": read})
            else:
                turn_input.append(inbox_to_llm(message))
        if asks:  # before the user's words, which stay the turn's last message
            turn_input.insert(0, {"role": "user", "content": eddie_asks.open_questions_note(asks)})
        hub = hub if hub is not None else await self._hub_context(ctx)
        messages = fit_history(
            {"role": "system", "content": system_prompt(process, hub) + eddie_peers.block(hub)},
            history_to_llm(history),
            turn_input,
            int(ctx.settings.get("maxContextTokens", 64_000)),
        )
        try:
            name, result = await run_action_loop(
                ctx,
                messages,
                [t for t in pool if t.name not in INTERNAL_TOOLS],
                tier=str(_setting(ctx, "model")),
                max_iterations=int(_setting(ctx, "maxIterations")),
                action_tools=[*a.ACTION_TOOLS, plan_mode.PLAN_PROPOSE_TOOL],
                parsers={**a.PARSERS, plan_mode.PLAN_PROPOSE: plan_mode.parse_plan},
                refused=eddie_guards.refusals(inbox),
                streamed=a.STREAMED,
            )
        except ModelNotConfiguredError as exc:
            await ctx.chat.append(ChatRole.SYSTEM, exc.message, {"error": exc.reason})
            return TurnOutcome.idle()
        if not name:  # plain text: an answer
            result = a.Action(a.ANSWER, {"message": str(result)})
        if isinstance(result, plan_mode.PlanProposal):
            outcome = await self._propose(ctx, result)
        else:
            outcome = await self._act(ctx, result, events)
        await eddie_peers.record_turn(ctx, inbox, outcome.summary)
        await self._bootstrap_voice(ctx, hub)
        return outcome

    async def _bootstrap_voice(self, ctx: ThinkEngineContext, hub: HubContext) -> None:
        """A language with no rules anywhere: this turn spoke with the English rules; once its
        answer is out, a fast-tier call writes rules for the language at the tenant level, and
        the next turn uses them. A failure leaves English in place."""
        lang = hub.language
        if hub.voice_rules or lang in BUNDLED_RULES:
            return
        try:
            reply = await ctx.llm.complete(
                tier="default:fast",
                messages=[{"role": "user", "content": BOOTSTRAP_PROMPT.format(lang=lang)}],
            )
        except Exception as exc:  # any failure of the model call: English stays
            logger.warning("voice rules for %s could not be bootstrapped: %s", lang, exc)
            return
        if reply.text.strip():
            await ctx.tools.invoke(
                "hub_voice_rules_store", {"language": lang, "rules": reply.text.strip()}, "voice"
            )

    async def _hub_context(self, ctx: ThinkEngineContext) -> HubContext:
        """Language and voice rules, resolved fresh each turn (a change applies next turn)."""
        result = await ctx.tools.invoke("hub_context", {}, "hub-context")
        return HubContext() if result.error else HubContext.from_json(result.result)

    async def _propose(
        self, ctx: ThinkEngineContext, proposal: plan_mode.PlanProposal
    ) -> TurnOutcome:
        """Plan mode, spoken: a short line says there is a plan, the steps are shown beside it."""
        view = await plan_mode.store(ctx, proposal)
        if isinstance(view, str):
            text = "I could not put the plan forward."
            await ctx.chat.append(ChatRole.ASSISTANT, text, {"action": a.ANSWER, "info": view})
            return TurnOutcome(ProcessStatus.IDLE, summary=text)
        steps = len(view.get("steps") or [])
        spoken = (
            f"I have a plan with {steps} {'step' if steps == 1 else 'steps'}. Shall I go ahead?"
        )
        meta = {**plan_mode.plan_meta(view), "info": plan_mode.render(view)}
        await ctx.chat.append(ChatRole.ASSISTANT, spoken, meta)
        return TurnOutcome.blocked(spoken)

    async def _summarise(self, ctx: ThinkEngineContext, event: ProcessEvent) -> None:
        """Channel mode `summary`: a milestone's text is condensed by a fast-tier model call in
        Eddie's own lane before Eddie sees it."""
        if event.payload.get("channelMode") != "summary":
            return
        if event.type not in (ProcessEventType.DONE, ProcessEventType.BLOCKED):
            return
        try:
            reply = await ctx.llm.complete(
                tier="default:fast",
                messages=[
                    {
                        "role": "system",
                        "content": "Summarise this worker output in one or two short spoken "
                        "sentences. No Markdown.",
                    },
                    {"role": "user", "content": event.human_summary},
                ],
            )
        except Exception as exc:  # any failure of the side call: the milestone text stands
            logger.warning("summary of %s failed: %s", event.source_process_id, exc)
            event.payload["summaryFailed"] = True
            return
        if reply.text.strip():
            event.payload["original"] = event.human_summary
            event.human_summary = reply.text.strip()

    async def _act(
        self, ctx: ThinkEngineContext, action: a.Action, events: list[ProcessEvent]
    ) -> TurnOutcome:
        args = action.args
        match action.name:
            case a.ANSWER:
                meta: JsonObject = {"action": a.ANSWER}
                if args.get("info"):
                    meta["info"] = args["info"]
                await ctx.chat.append(ChatRole.ASSISTANT, args["message"], meta)
                return TurnOutcome(ProcessStatus.IDLE, summary=args["message"])
            case a.ASK_USER:
                text = a.render_options(args["message"], action.options)
                meta = {"action": a.ASK_USER}
                if action.options:
                    meta["options"] = action.options
                await ctx.chat.append(ChatRole.ASSISTANT, text, meta)
                return TurnOutcome.blocked(args["message"])
            case a.RELAY:
                return await self._relay(ctx, args, events)
            case a.RELAY_INBOX:
                return await self._relay_inbox(ctx, args)
            case _:
                return await self._mediate(ctx, args)

    async def _relay(
        self, ctx: ThinkEngineContext, args: dict[str, str], events: list[ProcessEvent]
    ) -> TurnOutcome:
        source = args["source"]
        event = next(
            (
                e
                for e in reversed(events)
                if source in (e.source_process_id, e.source_process_name)
                or source == e.payload.get("project")
            ),
            None,
        )
        message = args.get("message") or (event.human_summary if event else "")
        if not message:
            message = "There is news from a worker."
        if eddie_guards.written(message):
            return await self._unspoken(ctx, source, message, event)
        meta: JsonObject = {"action": a.RELAY, "source": source}
        if event is None or event.type is not ProcessEventType.BLOCKED:
            await ctx.chat.append(ChatRole.ASSISTANT, message, meta)
            return TurnOutcome(ProcessStatus.IDLE, summary=message)
        # A worker's question: the same options, and the user's answer goes back to it.
        options = eddie_asks.options_of(event)
        meta["source"] = event.source_process_id
        meta["awaitingFor"] = event.source_process_id
        meta["askId"] = eddie_asks.ask_id_of(event)
        if options:
            meta["options"] = options
        await ctx.chat.append(ChatRole.ASSISTANT, a.render_options(message, options), meta)
        return TurnOutcome.blocked(message)

    async def _unspoken(
        self, ctx: ThinkEngineContext, source: str, text: str, event: ProcessEvent | None
    ) -> TurnOutcome:
        """Worker Markdown, code or long text is never spoken (engines/eddie_guards.py): long
        text goes to the inbox, the rest is shown beside a short spoken line."""
        name = (event.payload.get("project") or event.source_process_name) if event else source
        if eddie_guards.belongs_in_inbox(text):
            return await self._relay_inbox(
                ctx,
                {
                    "spoken": f"{name} sent a longer text. It is in your inbox.",
                    "inboxTitle": f"From {name}",
                    "body": text,
                },
            )
        spoken = f"Here is what {name} says."
        meta: JsonObject = {"action": a.ANSWER, "info": text, "source": source}
        if event is not None and event.type is ProcessEventType.BLOCKED:
            spoken = f"{name} has a question. It is shown beside this."
            meta["askId"] = eddie_asks.ask_id_of(event)
            meta["awaitingFor"] = event.source_process_id
            options = eddie_asks.options_of(event)
            if options:
                meta["options"] = options
            await ctx.chat.append(ChatRole.ASSISTANT, spoken, meta)
            return TurnOutcome.blocked(spoken)
        await ctx.chat.append(ChatRole.ASSISTANT, spoken, meta)
        return TurnOutcome(ProcessStatus.IDLE, summary=spoken)

    async def _relay_inbox(self, ctx: ThinkEngineContext, args: dict[str, str]) -> TurnOutcome:
        result = await ctx.tools.invoke(
            "inbox_forward_to_user",
            {"title": args["inboxTitle"], "body": args["body"]},
            "relay-inbox",
        )
        if result.error or not isinstance(result.result, dict):
            # Nothing is lost: the text is shown beside the spoken line instead.
            kept = {"action": a.ANSWER, "info": args["body"], "inboxError": result.error}
            await ctx.chat.append(ChatRole.ASSISTANT, args["spoken"], kept)
            return TurnOutcome(ProcessStatus.IDLE, summary=args["spoken"])
        meta: JsonObject = {
            "action": a.RELAY_INBOX,
            "inboxItemId": result.result.get("id"),
            "inboxTitle": args["inboxTitle"],
        }
        await ctx.chat.append(ChatRole.ASSISTANT, args["spoken"], meta)
        return TurnOutcome(ProcessStatus.IDLE, summary=args["spoken"])

    async def _mediate(self, ctx: ThinkEngineContext, args: dict[str, str]) -> TurnOutcome:
        profile = ctx.tools.profile
        if not capabilities(profile).can_mediate:
            meta = {"action": a.ANSWER, "mediateRefused": "profile_cannot_mediate"}
            await ctx.chat.append(ChatRole.ASSISTANT, CANNOT_MEDIATE, {**meta, "profile": profile})
            return TurnOutcome(ProcessStatus.IDLE, summary=CANNOT_MEDIATE)
        announcement = args.get("voiceAnnouncement") or "I'm connecting you directly now."
        result = await ctx.tools.invoke(
            "hub_switch_to",
            {"target": args["target"], "reason": args["reason"], "voiceAnnouncement": announcement},
            "mediate",
        )
        if result.error or not isinstance(result.result, dict):
            text = "I could not connect you directly."
            await ctx.chat.append(
                ChatRole.ASSISTANT, text, {"action": a.ANSWER, "info": result.error}
            )
            return TurnOutcome(ProcessStatus.IDLE, summary=text)
        switched: JsonObject = {
            "action": a.MEDIATE,
            "switchTo": result.result,
            "reason": args["reason"],
        }
        await ctx.chat.append(ChatRole.ASSISTANT, announcement, switched)
        return TurnOutcome(ProcessStatus.IDLE, summary=announcement)
