"""The conformance dashboard: a static site over the results files (``python -m conformance.dashboard``)."""
