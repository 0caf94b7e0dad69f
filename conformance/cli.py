"""Command-line parsing shared by the suite's tools: a bad argument is one line, exit code 2."""

from __future__ import annotations

import argparse


class OneLineErrors(argparse.ArgumentParser):
    """argparse, except that a usage error prints one line (argparse prints the usage first)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")
