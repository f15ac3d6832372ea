"""CLI subcommands. Each module has ``configure(parser)`` and ``run(args) -> int``.

Modules here import only the standard library at the top, so ``redline --help`` stays
fast; the real work is imported inside ``run``.
"""
