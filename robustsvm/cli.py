"""The ``robustsvm`` command line."""

from __future__ import annotations

import argparse
import sys

__all__ = ["main", "build_parser"]


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    run_demo()
    return 0


def _cmd_solvers(args: argparse.Namespace) -> int:
    from . import solvers

    print(solvers())
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="robustsvm",
        description="Support vector machines with sign constraints and uncertainty sets.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("demo", help="fit a few models on the Wisconsin breast cancer data and print a table")
    p.set_defaults(func=_cmd_demo)
    p = sub.add_parser("solvers", help="list the registered backends and what each can solve")
    p.set_defaults(func=_cmd_solvers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_usage(sys.stderr)
        print("robustsvm: error: a command is required", file=sys.stderr)
        return 2
    return int(args.func(args) or 0)
