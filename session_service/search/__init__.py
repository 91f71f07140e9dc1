"""Session search: find sessions by title, tags and conversation (docs/architecture.md,
"Session search").

- tokens.py: how text becomes tokens, query terms and snippets.
- store.py: the index collections (token-keyed posting lists, per-session word lists, the
  indexed message texts, the indexer's position), read and written by `_id` only.
- cards.py: the per-owner session cards a search ranks and filters without loading sessions.
- query.py: a search over the index (SearchSessions).
- indexer.py: feeds the index from process_service's chat feed, and sees each session's first
  question-and-answer pair for the metadata auto-suggest.
- wiring.py: builds the above once per session_service replica and runs the indexer.
"""
