"""Where the user's answer goes (seed 001 §5.6, §5.8): every question a worker asks the hub is
an *ask* with its own id (process_service/hub/talk.py). A user message goes to the ask it
answers, without a model call, when that is clear: the client named the ask (an option
clicked), or the text is (or starts with) an option of exactly one open ask. Otherwise Eddie's
model sees the open questions with their ids before the user's words and chooses
(`answer_question`), asks back, or treats the words as a new request. Never "whatever came
last"."""

from __future__ import annotations

from dataclasses import dataclass

from engine_worker.context import ThinkEngineContext
from engine_worker.engines import eddie_actions as a
from engine_worker.json_types import JsonObject
from vance.domain import ChatRole, ProcessEvent, ProcessEventType, SteerMessage, UserChatInput

FORWARDED = "I passed your answer on."
NOT_FORWARDED = "I could not pass your answer on."


@dataclass(frozen=True, slots=True)
class OpenAsk:
    """A question a worker asked the hub that the user has not answered yet (`hub_asks`,
    process_service/hub/talk.py)."""

    ask_id: str
    process_id: str  # the asking worker
    project: str  # its project, "" for a local child
    source: str  # the asking process's name
    question: str
    option_labels: list[str]

    @classmethod
    def from_json(cls, raw: JsonObject) -> OpenAsk:
        """One entry of the tool's JSON result."""
        options = raw.get("options")
        return cls(
            ask_id=str(raw.get("askId") or ""),
            process_id=str(raw.get("processId") or ""),
            project=str(raw.get("project") or ""),
            source=str(raw.get("source") or ""),
            question=str(raw.get("question") or ""),
            option_labels=[
                str(o.get("label") or "")
                for o in (options if isinstance(options, list) else [])
                if isinstance(o, dict)
            ],
        )


def options_of(m: ProcessEvent) -> list[dict[str, str]]:
    relayable = m.payload.get("relayableActionParams") or {}
    options = relayable.get("options") if isinstance(relayable, dict) else None
    return [o for o in options if isinstance(o, dict)] if isinstance(options, list) else []


def ask_id_of(m: ProcessEvent) -> str:
    """The worker's question id (observations.py sets it); a local child's BLOCKED has none,
    so its event's own key stands in."""
    return str(m.payload.get("askId") or f"ask_{m.idempotency_key or m.id}")


async def open_ask(ctx: ThinkEngineContext, m: ProcessEvent) -> None:
    if m.type is not ProcessEventType.BLOCKED:
        return
    await ctx.tools.invoke(
        "hub_ask_open",
        {
            "askId": ask_id_of(m),
            "processId": m.source_process_id,
            "project": str(m.payload.get("project") or ""),
            "source": m.source_process_name,
            "question": m.human_summary,
            "options": options_of(m),
        },
        f"ask-{ask_id_of(m)}",
    )


def _matches(text: str, ask: OpenAsk) -> bool:
    said = text.strip().casefold()
    for option in ask.option_labels:
        label = option.strip().casefold()
        if label and (said == label or said.startswith(label)):
            return True
    return False


def _target(message: UserChatInput, asks: list[OpenAsk]) -> OpenAsk | None:
    if message.ask_id:
        return next((x for x in asks if x.ask_id == message.ask_id), None)
    by_option = [x for x in asks if _matches(message.content, x)]
    # Anything else may be an answer or a new request ("make another project" while a worker
    # waits): the model tells them apart, with the open questions in front of it.
    return by_option[0] if len(by_option) == 1 else None


async def route(
    ctx: ThinkEngineContext, inbox: list[SteerMessage]
) -> tuple[list[SteerMessage], list[OpenAsk]]:
    """The inbox minus the answers sent on, and the asks still open."""
    if not any(isinstance(m, UserChatInput) for m in inbox):
        return inbox, []
    listed = await ctx.tools.invoke("hub_asks", {}, "asks")
    raw = listed.result.get("asks") if isinstance(listed.result, dict) else None
    asks = (
        [OpenAsk.from_json(x) for x in raw if isinstance(x, dict)] if isinstance(raw, list) else []
    )
    if not asks:
        return inbox, []
    rest: list[SteerMessage] = []
    for message in inbox:
        target = _target(message, asks) if isinstance(message, UserChatInput) else None
        if target is None or not isinstance(message, UserChatInput):
            rest.append(message)
            continue
        await ctx.chat.append(ChatRole.USER, message.content, {"askId": target.ask_id})
        result = await ctx.tools.invoke(
            "answer_question",
            {"askId": target.ask_id, "message": message.content},
            f"answer-{target.ask_id}",
        )
        asks.remove(target)
        meta: JsonObject = {
            "action": a.ANSWER,
            "askId": target.ask_id,
        }  # the message's meta (JSON)
        if result.error:
            await ctx.chat.append(ChatRole.ASSISTANT, NOT_FORWARDED, {**meta, "info": result.error})
        else:
            meta["forwardedTo"] = target.process_id
            await ctx.chat.append(ChatRole.ASSISTANT, FORWARDED, meta)
    return rest, asks


def open_questions_note(asks: list[OpenAsk]) -> str:
    """For the model when a user message did not say which question it answers."""
    lines = [
        "<open-questions>Workers are waiting for the user's answers. If the user's message "
        "answers one, call answer_question with its askId; if you cannot tell which, ask the "
        "user (ask_user). Otherwise treat the message as usual."
    ]
    for x in asks:
        options = "; ".join(x.option_labels)
        where = f"project {x.project}" if x.project else f"process {x.source}"
        lines.append(
            f'- askId="{x.ask_id}" ({where}): {x.question}'
            + (f" Options: {options}" if options else "")
        )
    return "\n".join(lines) + "</open-questions>"
