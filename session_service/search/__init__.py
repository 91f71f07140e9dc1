"""Session search: find sessions by title, tags and conversation (docs/architecture.md,
"Session metadata and search").

- tokens.py: how text becomes tokens, query terms and snippets.
- packed.py: large id lists as a compressed string plus an append array.
- index_store.py: the index collections (token-keyed posting lists, the prefix vocabulary, the
  indexed message texts, the indexer's position), read and written by `_id` only.
- words.py: per-session word lists, and what the indexer remembers of them.
- cards.py: the per-owner session cards a search ranks and filters without loading sessions.
- stage.py: the seam for ways of finding sessions (search stages).
- fulltext.py: the full-text stage (title, tags, conversation words, snippets).
- query.py: listing and searching (ListSessions, SearchSessions): scope, filter, ranking.
- held.py: session documents a search page read, reused for seconds while their cards agree.
- indexer.py: feeds the index from process_service's chat feed.
- first_pair.py: each session's first question-and-answer pair, and the metadata auto-suggest.
- search_wiring.py: builds the above once per session_service replica and runs the indexer.
"""
