"""What operators see of brain-graph at work: Prometheus metrics (:mod:`.metrics`), a request id per
HTTP request carried into every log record (:mod:`.requests`, :mod:`.logs`) and the timing of each
backend read of a search (:mod:`.timing`). None of it changes what a search returns."""
