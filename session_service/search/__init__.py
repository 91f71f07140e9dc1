"""Session metadata and search: a session's title, icon, color, tags and pin, and finding
sessions by them and by their conversation (docs/architecture.md, "Session metadata and
search").

- tokens.py: how text becomes tokens, query terms and snippets.
- index_store.py: the index collections (token-keyed posting lists, the prefix vocabulary, the
  indexed message texts, the indexer's position), read and written by `_id` only.
- words.py: per-session word lists, and what the indexer remembers of them.
- stage.py: the seam for ways of finding sessions (search stages).
- fulltext.py: the full-text stage (title, tags, conversation words, snippets).
- query.py: listing and searching (ListSessions, SearchSessions): scope, filter, ranking.
- held.py: session documents a search page read, reused for seconds while their cards agree.
- indexer.py: feeds the index from process_service's chat feed.
- first_pair.py: each session's first question-and-answer pair, and the metadata auto-suggest.
- session_metadata.py: a user's metadata patch and the suggested fields (never over a user's).
- suggest.py: the model call that suggests title, icon and color.
- search_wiring.py: builds the above once per session_service replica and runs the indexer.

The session cards a search ranks and filters (store/session_cards.py) and the packed lists the
index is made of (store/packed_lists.py) are storage layouts, so they live in store/.
"""
