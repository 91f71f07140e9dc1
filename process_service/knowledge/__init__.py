"""Memory recall and RAG (docs/architecture.md "Memory and RAG")."""
