"""The ``eval.jsonl`` journal: read, append, a whole ledger in one batch."""
