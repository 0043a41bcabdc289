"""The LangGraph graphs: ``brain_search`` (:mod:`.search`) and ``brain_index`` (:mod:`.index`)."""
