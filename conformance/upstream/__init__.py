"""Run the suite against other TorchRL sources (``nox -s upstream``): see ``runner``."""
