"""The ``brain-graph`` command line (:mod:`.main`)."""
