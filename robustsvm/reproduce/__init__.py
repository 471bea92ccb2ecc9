"""Reproductions of the papers robustsvm builds on.

Each module exposes ``add_arguments(parser)`` and ``run(args) -> int`` and is
reachable as ``robustsvm reproduce <name>``.
"""
