import sys

from benchtools.cli import main

sys.exit(main())
