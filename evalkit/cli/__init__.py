"""The ``evalkit`` command line: one module per subcommand, wired together in ``main``."""
