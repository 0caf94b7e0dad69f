"""Self-tests of the library adapters. Each module needs its library, which only the library's
layer holds: ``nox -s libraries`` runs them there; elsewhere they are skipped, saying so."""
