"""The command line: a thin face over the core. One module per command group."""
