"""Deliberately broken implementations (historical bugs), plugged into the suite with
``--impl tests.mutants.<module>:<NAME>`` exactly as a user plugs in their own code."""
