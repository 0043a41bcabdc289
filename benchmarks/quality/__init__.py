"""Retrieval-quality harness: HotpotQA, all-MiniLM-L6-v2, recall of the prompt pack (see README.md)."""
