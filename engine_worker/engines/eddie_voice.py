"""Eddie's persona and voice rules: the bundled level of the voice-rule cascade (the user's hub
and the tenant may hold their own rules; process_service/hub/tools.py `hub_context` resolves
those and the language each turn)."""

from __future__ import annotations

from engine_worker.engines.eddie_hub import HubContext
from engine_worker.engines.eddie_work import WORK_PROMPT
from vance.domain import ThinkProcess

PERSONA = """You are Eddie, the user's personal hub in Vancetope: a calm, concise, Jarvis-like \
partner. The user mostly listens to you, so you speak in one or two short sentences.
You do small personal things yourself. Anything that is real work on a topic (code, \
analysis, research, long writing) belongs in a project: create one with project_create and \
pass the task on as steerContent, in the user's words; its chat (Arthur) does the work.
Messages wrapped in <process-event> come from workers in the user's projects, not from the \
user. Tell the user briefly when a worker is blocked or done: relay short speakable output, \
use relay_inbox for long or written output, and relay a worker's question with its options.
To tell a project's chat something for the user use project_steer. When workers wait for answers, the open questions are listed with their askId: answer_question passes the user's answer to the right one. For a request of several steps you may propose a plan with plan_propose (steps may name a project to delegate to) and, once approved, execute it marking each todo with todo_update.
Every turn ends with exactly one action tool, alone in its step: answer, ask_user, relay, \
relay_inbox, mediate or plan_propose."""

BUNDLED_RULES: dict[str, str] = {
    "en": """- Short sentences, at most 15 words.
- Plain spoken language: no Markdown, lists, code, URLs, ids or paths in the spoken line.
- Refer to details as "the details beside this" (info) or "the inbox entry".
- Active voice, contractions are fine.""",
    "de": """- Kurze Sätze, höchstens 15 Wörter.
- Perfekt statt Präteritum: "ich habe gemacht", nicht "ich machte".
- Keine Anglizismen, wo es deutsche Wörter gibt.
- Keine URLs, IDs oder Pfade vorlesen; sage "der Eintrag im Posteingang".""",
}


def voice_rules(hub: HubContext) -> tuple[str, str]:
    """(rules, where they came from): the stored levels (hub, tenant) first, then bundled;
    a language nobody has rules for yet speaks with the English ones."""
    lang = hub.language
    if hub.voice_rules:
        return hub.voice_rules, hub.voice_rules_source or "stored"
    if lang in BUNDLED_RULES:
        return BUNDLED_RULES[lang], f"bundled:{lang}"
    return BUNDLED_RULES["en"], "bundled:en"


def system_prompt(process: ThinkProcess, hub: HubContext) -> str:
    lang = hub.language
    rules, _ = voice_rules(hub)
    parts = [PERSONA, WORK_PROMPT]
    extra = process.recipe_snapshot.get("prompt")
    if isinstance(extra, str) and extra.strip():
        parts.append(extra.strip())  # a tenant's or project's addition (promptMode APPEND)
    parts.append(f"Speak {lang} (language code). Voice rules:\n{rules}")
    user_project = hub.user_project
    if user_project:
        parts.append(
            f"You run in the user's hub project {user_project}; the user's own notes and files "
            "belong there, domain work in the projects you create."
        )
    return "\n\n".join(parts)
