"""JavaScript semantics the reference engine's verdicts depend on: ``Date.parse``, numbers, values."""
