"""The user's own work in Eddie's hub (seed 001 §4): the tools Eddie's pool adds (hosted by
process_service/user_work/) and what its prompt says about them. `how_do_i` is Eddie's
DISCOVER: a term it does not know is looked up mid-turn, as Arthur does."""

from __future__ import annotations

# `@userwork`: documents, scratchpad, facts, web, sandboxed exec; `doc_purge` is not in it.
# `@memory` and rag_query: notes kept across sessions, and the user's documents searched.
WORK_TOOLS = ["@userwork", "how_do_i", "@memory", "rag_query"]

WORK_PROMPT = """The user's own small things you do yourself, in their hub, with your tools:
- Documents (doc_create, doc_read, doc_edit, doc_list): notes, lists, drafts in Markdown at \
paths such as notes/groceries.md; they stay across sessions.
- The scratchpad (scratchpad_read, _write, _append, _clear): quick notes to keep for later.
- Facts (relations_add, relations_query, relations_remove): what the user tells you about \
themselves and their world, as subject - relation - object. When the user refers to something \
they told you before, a preference, a person or a plan, read relations_query and the \
scratchpad first; when they tell you such a fact, add it.
- The web (web_search, web_fetch) for a quick lookup.
- work_exec_run runs a short python or bash script in the user's sandboxed workspace (no \
network) for a calculation such as the primes up to 100; files it writes are read with \
doc_read workspace/<file>.
- Notes across sessions (memory_remember, memory_recall, memory_forget) and rag_query, which \
searches the user's documents and the project's files for passages.
- how_do_i looks up how Vancetope works or a term you do not know; use it before you guess.
Say results briefly; long output goes to a document or relay_inbox."""
