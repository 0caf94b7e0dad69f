"""An implementation whose import ends the process with exit code 0 (issue #44)."""

import os

os._exit(0)
