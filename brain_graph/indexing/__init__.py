"""The write side: vectors kept in step with the graph.

- :mod:`.hashing`: what a vector was made from (its content hash).
- :mod:`.batches`: embedding texts in batches, a failing text reported instead of aborting.
- :mod:`.indexer`: the incremental indexer (``brain-graph index``, the ``brain_index`` graph).
- :mod:`.hooks`: :class:`GraphWriter`, batched upserts and deletes an application calls on its own
  create, update and delete.
"""
