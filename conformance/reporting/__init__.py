"""Reports built from results files (``python -m conformance.reporting RESULTS... [-o DIR]``)."""
