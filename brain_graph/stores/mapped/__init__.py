"""The mapped backend: brain-graph's searches over a Neo4j graph (and vectors) a team already has,
read as brain-graph's model through a mapping (:mod:`.mapping`). It never writes."""
