# A TorchRL that does not import (a pull request that broke it): put this folder first on
# PYTHONPATH.
raise ImportError("this torchrl is broken on purpose (tests/leaks/broken_torchrl)")
