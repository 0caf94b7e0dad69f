"""Plug-ins and packages that misbehave on purpose, for the gate's self-tests (issue #22)."""
