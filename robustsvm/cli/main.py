"""The ``robustsvm`` command line (also ``python -m robustsvm``).

Subcommands: ``demo``, ``solvers``, ``fit``, ``compare``, ``validate``, ``certify``,
``predict`` (with ``fit``'s stored preprocessing: :mod:`robustsvm.cli.data`) and ``reproduce NAME``
(the modules of :mod:`robustsvm.reproduce`); ``robustsvm --version`` prints the version (the
benchmark suite is a script: ``benchmarks/bench_suite.py``). ``fit``,
``compare``, ``solvers`` and ``validate`` take ``--json`` for one JSON document
on stdout instead of text. Argument errors print a usage line and exit with
status 2; a failed run (including any bad value the package refuses) prints one
line ``robustsvm COMMAND: error: ...`` on stderr and exits with status 1.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
import warnings
from collections.abc import Callable
from typing import Any

from ..terms.losses import LOSSES
from ..uncertainty.grammar import GRAMMAR, describe_kinds
from . import data as cli_data
from . import table_model
from .data import load_data
from .parsing import (
    nonneg_float,
    parse_bounds,
    parse_intercept,
    parse_kernel,
    parse_signs,
    parse_uncertainty,
    positive_float,
    positive_int,
)

__all__ = ["build_parser", "load_data", "main", "parse_bounds", "parse_intercept", "parse_kernel", "parse_signs",
           "parse_uncertainty", "problem_from_args", "reproductions"]

#: reproductions known to the command line even before their module is installed
KNOWN_REPRODUCTIONS = ("sha2002", "woolnough2022")

#: the losses by their command-line names (the short names of robustsvm.terms.losses.LOSSES, with hyphens)
_LOSSES = tuple(name.replace("_", "-") for name in LOSSES)

#: λ2 when --l2 is not given: RobustSVC's default, so the shell and Python fit the same model
DEFAULT_L2 = 1.0

#: seconds of work before a progress bar appears (short runs show none)
PROGRESS_DELAY = 2.0


# -------------------------------------------------------------------- data
def _add_fitting_arguments(p: argparse.ArgumentParser, solver_help: str, output_help: str) -> None:
    """The data, the model, ``--solver`` (default clarabel), its options and ``--output`` of ``fit`` and ``cv``."""
    from . import per_class

    _add_data_arguments(p)
    _add_model_arguments(p)
    per_class.add_arguments(p.add_argument_group(
        "one class's model (three or more classes)",
        "Model k separates class k from the rest, so its +1 sign is evidence for class k; give each class's model "
        "its own signs, bounds or set with these options, the plain ones being the default of the classes not "
        "named."))
    p.add_argument("--solver", default="clarabel", help=solver_help)
    _add_solver_options(p)
    p.add_argument("--output", "-o", help=output_help)


def _add_data_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("data", help="a CSV file, or a data set name (wdbc, sonar, pima, bands, wisconsin)")
    p.add_argument("--target", help="the CSV's label column (default: its last column)")
    p.add_argument("--no-standardize", dest="standardize", action="store_false",
                   help="use the features as they are (default: z-scores over the whole data)")


def _add_model_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model")
    g.add_argument("--loss", choices=_LOSSES, default="hinge", help="margin loss (default: hinge)")
    g.add_argument("--reduction", choices=("mean", "sum"), default="mean",
                   help="average or sum the losses over samples (default: mean)")
    g.add_argument("--l2", type=nonneg_float, default=DEFAULT_L2,
                   help=f"λ2 of (λ2/2)‖w‖² (default: {DEFAULT_L2:g}, as RobustSVC's l2)")
    g.add_argument("--l1", type=nonneg_float, default=0.0, help="λ1 of λ1‖w‖₁ (default: 0)")
    g.add_argument("--signs", type=parse_signs,
                   help="sign constraints, e.g. 'mean radius=-1,3=+1' (+1 pushing towards the positive class); "
                        "with three or more classes, the signs of every model that --signs-for does not name")
    g.add_argument("--bounds", type=parse_bounds, metavar="FEATURE=LOWER:UPPER,...",
                   help="bounds on the weights of the model's features (standardized unless --no-standardize), "
                        "e.g. 'age=0:inf,dose=-1:1'; a side may be inf, -inf or empty; they meet --signs (three or "
                        "more classes: the models --bounds-for does not name)")
    g.add_argument("--uncertainty", type=parse_uncertainty, metavar="KIND:RADIUS[:NAME=VALUE]",
                   help=f"the set around every sample, {GRAMMAR}; KIND[PARAMETERS] is one of {describe_kinds()} "
                        "(e.g. box:0.05, ball:0.1:p=inf, box:0.05+ellipsoid:0.1:shape=M.npy, wasserstein:0.05); "
                        "a file parameter is .npy, .csv, .txt or .json; three or more classes: the models "
                        "--uncertainty-for does not name")
    icpt = g.add_mutually_exclusive_group()
    # default None (a free b): argparse would not see a conflict between --no-intercept and a value equal to
    # the default
    icpt.add_argument("--intercept", type=parse_intercept, default=None, metavar="MODE",
                      help="free (default: an unregularized b), none (b = 0) or ridge:MU (b with (MU/2) b²)")
    icpt.add_argument("--no-intercept", dest="intercept", action="store_false", default=None,
                      help="the same as --intercept none")
    g.add_argument("--kernel", type=parse_kernel, metavar="KERNEL",
                   help="linear, poly:DEGREE or rbf:SIGMA (solved in the dual: a conic solver, "
                        "or m3 with --no-intercept)")


def problem_from_args(args: argparse.Namespace):
    """The :class:`~robustsvm.problem.Problem` described by the model options."""
    from .. import Problem
    from ..terms.penalties import Penalty

    loss = LOSSES[args.loss.replace("-", "_")]
    return Problem(loss=loss(reduction=args.reduction), penalty=Penalty(l2=args.l2, l1=args.l1),
                   signs=args.signs, bounds=getattr(args, "bounds", None),
                   constraints=getattr(args, "constraints", None), uncertainty=args.uncertainty,
                   intercept=True if args.intercept is None else args.intercept, kernel=args.kernel)


def _add_solver_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tol", type=positive_float, help="the solver's tolerance")
    p.add_argument("--max-iter", type=positive_int, help="the solver's iteration limit")
    p.add_argument("--no-progress", dest="progress", action="store_false",
                   help=f"no progress bar on stderr (one appears only when the work lasts over {PROGRESS_DELAY:g} s)")


def _add_json_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true",
                   help="print one JSON document on stdout instead of text (warnings stay on stderr)")


def _print_json(document: Any) -> None:
    """One strict JSON document on stdout: numpy values made plain, non-finite floats as ``"NaN"``/``"Infinity"``
    strings (:func:`robustsvm.formats.fingerprint.plain`)."""
    from ..formats.fingerprint import plain

    print(json.dumps(plain(document), indent=1, allow_nan=False, default=str))


def _solver_options(args: argparse.Namespace) -> dict:
    out = {}
    if args.tol is not None:
        out["tol"] = args.tol
    if args.max_iter is not None:
        out["max_iter"] = args.max_iter
    return out


def _bar(total: int, desc: str, enabled: bool):
    """A progress bar on stderr that shows only once the work has lasted ``PROGRESS_DELAY`` seconds."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, file=sys.stderr, disable=not enabled, leave=False, delay=PROGRESS_DELAY,
                bar_format="{desc}{n_fmt}/{total_fmt} [{elapsed}]")


def _data_json(X: Any, description: str, names: list[str]) -> dict:
    return {"description": description, "n_samples": int(X.shape[0]), "n_features": int(X.shape[1]),
            "feature_names": names}


def _model_json(problem: Any) -> dict:
    return {"text": repr(problem), **problem.to_dict()}


# ---------------------------------------------------------------- commands
def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    run_demo()
    return 0


def _cmd_predict(args: argparse.Namespace) -> int:
    from . import one_vs_rest, one_vs_rest_file

    if one_vs_rest_file.stored_in(args.model):  # one model of each of more than two classes
        return one_vs_rest.run_predict(args)
    return cli_data.run_predict(args)


def _model_given(args: argparse.Namespace) -> bool:
    """Whether any model option differs from its default (``solvers`` then checks that model)."""
    defaults = args.model_defaults
    return any(getattr(args, k) is not v and getattr(args, k) != v for k, v in defaults.items())


def _cmd_solvers(args: argparse.Namespace) -> int:
    from .. import solvers

    problem = problem_from_args(args) if _model_given(args) else None
    table = solvers(problem)
    if args.json:
        _print_json({"model": None if problem is None else _model_json(problem), "solvers": list(table)})
        return 0
    if problem is not None:
        print(problem)
    print(table)
    return 0


def _cmd_fit(args: argparse.Namespace) -> int:
    import numpy as np

    from ..exceptions import ConvergenceWarning, DegenerateSolutionWarning
    from ..formats.io import solution_to_dict
    from .metrics import weighted_accuracy

    fitted = cli_data.prepare_fit(args)  # the table through its fitted preprocessing; --signs in its feature names
    X, y, names, description = fitted.X, fitted.y, fitted.names, fitted.description
    problem = problem_from_args(args)
    if fitted.n_classes > 2:  # one model of each class against the rest
        from . import one_vs_rest

        return one_vs_rest.run_fit(args, fitted, problem, _solver_options(args), _print_json)
    incomplete = int(np.isnan(X).any(axis=1).sum()) if getattr(args, "missing", "error") == "uncertain" else 0
    if not args.json:
        print(description)
        print(fitted.rules.describe())
        print(problem)
        if incomplete:
            print(f"missing     each of the {incomplete} incomplete rows at its conditional mean, with an ellipsoid "
                  f"over its missing values (level {args.missing_level:g}) added to its uncertainty")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        warnings.simplefilter("always", DegenerateSolutionWarning)
        sol = table_model.solve(problem, fitted, args, _solver_options(args))  # class weights, --missing
        X = fitted.X  # with --missing uncertain: the rows' centres
        cli_data.finish_fit(sol, fitted, problem, args, _solver_options(args))  # the rules; --probability
    notes = list(dict.fromkeys(fitted.warnings + [str(w.message) for w in caught]))
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)
    correct = sol.predict(X) == y
    accuracy = float(np.mean(correct))
    weights = None if fitted.class_weight is None else table_model.row_weights(fitted.class_weight, y)
    weighted = None if weights is None else weighted_accuracy(correct, y, weights)
    path = sol.to_json(args.output, X, y) if args.output else None
    if args.json:
        solution = solution_to_dict(sol, X, y)
        solution.pop("history", None)  # iteration by iteration: in the --output file
        _print_json({"data": {**_data_json(X, description, names), "preprocessing": solution.pop("preprocessing")},
                     "model": {**_model_json(problem), "missing_values": None if not incomplete else
                               {"incomplete_rows": incomplete, "level": args.missing_level}},
                     "classes": {"+1": sol.class_mapping[1], "-1": sol.class_mapping[-1]},
                     "solution": solution, "training_accuracy": accuracy,
                     "weighted_training_accuracy": None if weighted is None else weighted[0],
                     "weighted_constant_accuracy": None if weighted is None else weighted[1],
                     "degenerate": sol.degenerate,
                     "warnings": notes, "output": None if path is None else str(path)})
    else:
        print(sol.summary())
        print(f"training accuracy {accuracy:.4f}")
        if weighted is not None:
            print(f"weighted by the class weights {weighted[0]:.4f} (always the larger class: {weighted[1]:.4f})")
        if sol.w is not None and args.show_weights:
            order = np.argsort(-np.abs(sol.w), kind="stable")[: args.show_weights]
            for h in order:
                print(f"  w[{names[h]}] = {sol.w[h]:+.6g}")
        if path is not None:
            print(f"solution written to {path}")
    return 0 if sol.status == "optimal" else 3 if args.strict else 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from ..backends.conic import default_backends
    from ..compare import compare

    X, y, names, description = load_data(args.data, args.target, args.standardize)
    problem = problem_from_args(args)
    solvers = args.solvers or default_backends(problem)
    order = [args.reference] + [s for s in solvers if s != args.reference]
    if not args.json:
        print(description)
        print(problem)
    options = {name: _solver_options(args) for name in order}
    with _bar(len(order), "solving", args.progress) as bar:
        table = compare(_Progress(problem, bar), X, y, solvers=order, reference=args.reference,
                        options=options, feature_names=names)
    failed = [row["solver"] for row in table if str(row.get("status", "")).startswith("error")]
    if args.json:
        rows = [{k: v for k, v in row.items() if k != "solution"} for row in table]
        _print_json({"data": _data_json(X, description, names), "model": _model_json(problem),
                     "reference": args.reference, "rows": rows, "failed": failed})
    else:
        print(table)
    return 1 if failed else 0


class _Progress:
    """A model whose ``solve`` advances a progress bar; everything else is the model's."""

    def __init__(self, problem: Any, bar: Any) -> None:
        self._problem, self._bar = problem, bar

    def solve(self, *args: Any, **kwargs: Any):
        self._bar.set_description(f"solving with {kwargs.get('solver')}", refresh=False)
        try:
            return self._problem.solve(*args, **kwargs)
        finally:
            self._bar.update()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._problem, name)


def _cmd_validate(args: argparse.Namespace) -> int:
    from ..formats.io import validate
    from . import one_vs_rest, one_vs_rest_file

    if one_vs_rest_file.stored_in(args.solution):  # one model of each of more than two classes
        return one_vs_rest.run_validate(args, _print_json)
    sol = cli_data.read_model(args.solution, args.accept_modified)
    X, y, _, description = cli_data.validation_data(args, sol)  # the stored preprocessing applied to the data
    report = validate(sol, X, y, sample_weight=table_model.stored_sample_weight(sol, y), rtol=args.rtol,
                      feas_tol=args.feas_tol)
    if args.json:
        _print_json({"data": {"description": description}, "solution": str(args.solution), "ok": report.ok,
                     **{k: v for k, v in vars(report).items() if k != "ok"}})
    else:
        print(description)
        print(report)
    return 0 if report.ok else 1


# ------------------------------------------------------- reproduce plug-ins
def reproductions() -> list[str]:
    """Names for ``robustsvm reproduce``: the modules of :mod:`robustsvm.reproduce` and the known ones."""
    from .. import reproduce

    found = {m.name for m in pkgutil.iter_modules(reproduce.__path__) if not m.name.startswith("_")}
    return sorted(found | set(KNOWN_REPRODUCTIONS))


def _plugin(module: str, what: str) -> Any:
    """Import a plug-in module exposing ``add_arguments(parser)`` and ``run(args) -> int``."""
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and module.startswith(exc.name):
            raise _UnavailableError(f"{what} is not available in this installation (no module {module})") from exc
        raise
    for attr in ("add_arguments", "run"):
        if not callable(getattr(mod, attr, None)):
            raise _UnavailableError(f"{what}: module {module} has no {attr}() function")
    return mod


class _UnavailableError(RuntimeError):
    """A subcommand whose module is missing."""


def _plugin_command(module: str, what: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        return int(_plugin(module, what).run(args) or 0)

    return run


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser with every subcommand.

    The ``reproduce NAME`` plug-ins are imported only when
    ``argv`` asks for them (so other commands start fast); their options are
    then added by the module's ``add_arguments``.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="robustsvm",
        description="Support vector machines with sign constraints and uncertainty sets.",
    )
    parser.add_argument("--version", action="version", version=f"robustsvm {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("demo", help="fit a few models on the Wisconsin breast cancer data and print a table")
    p.set_defaults(func=_cmd_demo)
    p = sub.add_parser("solvers", help="list the registered backends and what each can solve",
                       description="List the registered backends. With model options (--loss, --uncertainty, "
                                   "--kernel, ...), say for each backend whether it accepts that model and why not.")
    _add_model_arguments(p)
    _add_json_option(p)
    p.set_defaults(func=_cmd_solvers,
                   model_defaults={a.dest: a.default for a in p._actions if a.dest not in ("help", "json")})

    p = sub.add_parser("fit", help="fit one model on a CSV file or a named data set",
                       description="Fit one model and print the solution's summary (and write it as JSON). With "
                                   "more than two classes, fit one model of each class against the rest, each "
                                   "certified, and predict the class of the largest decision value.")
    _add_fitting_arguments(p, "backend name (see `robustsvm solvers`) or auto (chosen from the model; default "
                              "clarabel)", "write the solution (with the data fingerprint) to this JSON file")
    p.add_argument("--show-weights", type=positive_int, default=0, metavar="K", help="print the K largest weights")
    p.add_argument("--strict", action="store_true", help="exit with status 3 when the solver is not optimal")
    _add_json_option(p)
    cli_data.add_fit_arguments(p)
    p.set_defaults(func=_cmd_fit)
    cli_data.add_predict_command(sub).set_defaults(func=_cmd_predict)

    from . import cv

    p = sub.add_parser("cv", help="choose λ2 and the radius by cross-validation (a scikit-learn scorer)",
                       description="Cross-validate RobustSVC over --l2-grid × --radius-grid with a scikit-learn "
                                   "scorer, each training fold learning the preprocessing statistics (fill values, "
                                   "z-scores) from its own rows; print the chosen point, its CV score and the "
                                   "certificate of its refit on every row.")
    _add_fitting_arguments(p, "backend name (see `robustsvm solvers`; default clarabel)",
                           "write the refitted solution (as fit --output) to this JSON file")
    _add_json_option(p)
    cli_data.add_fit_arguments(p)
    cv.add_arguments(p)
    p.set_defaults(func=lambda a: cv.run(a, problem_from_args, _solver_options, _print_json))

    p = sub.add_parser("compare", help="solve one model with several backends and tabulate them",
                       description="Solve one model with several backends; print the table of rs.compare.")
    _add_data_arguments(p)
    _add_model_arguments(p)
    p.add_argument("--solvers", type=lambda s: [t.strip() for t in s.split(",") if t.strip()],
                   help="comma-separated backends (default: every backend that accepts the model; highs for LPs only)")
    p.add_argument("--reference", default="clarabel", help="the backend the others are measured against")
    _add_solver_options(p)
    _add_json_option(p)
    p.set_defaults(func=_cmd_compare)

    p = sub.add_parser("validate", help="re-check a stored solution (JSON) on its data",
                       description="Re-evaluate a stored solution's objective, constraints and data fingerprint.")
    p.add_argument("solution", help="a JSON file written by `robustsvm fit --output` or Solution.to_json")
    _add_data_arguments(p)
    p.add_argument("--rtol", type=positive_float, default=1e-8, help="objective tolerance (relative)")
    p.add_argument("--feas-tol", type=nonneg_float, default=1e-6, help="constraint violation tolerance")
    cli_data.add_accept_modified_argument(p)
    _add_json_option(p)
    p.set_defaults(func=_cmd_validate)

    from . import certify as certify_command

    p = sub.add_parser("certify", help="certify a point computed elsewhere: objective, violation, bound on its excess",
                       description="Certify weights from any solver on a model and data: the objective, the "
                                   "constraint violation and a bound on objective - optimum from the package's "
                                   "own dual (exit status 1 when the point is infeasible).")
    certify_command.add_arguments(p, _add_data_arguments, _add_json_option)
    p.set_defaults(func=lambda a: certify_command.run(a, load_data, _print_json))

    p = sub.add_parser("reproduce", help="reproduce a paper's experiment: " + ", ".join(reproductions()),
                       description="Reproduce a paper's experiment.")
    rsub = p.add_subparsers(dest="name", metavar="NAME")
    for name in reproductions():
        module = f"robustsvm.reproduce.{name}"
        rp = rsub.add_parser(name, help=f"the experiments of {name}")
        rp.set_defaults(func=_plugin_command(module, f"reproduce {name}"))
        if command == "reproduce" and name in argv:
            try:
                _plugin(module, f"reproduce {name}").add_arguments(rp)
            except _UnavailableError:
                pass  # reported when run
    p.set_defaults(func=None, usage_of=p)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (2 for a usage error, 1 for a failed run)."""
    from ..exceptions import SolverError

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # the subcommand's usage, not the top-level one
        _subcommand_parser(parser, args).error(f"unrecognized arguments: {' '.join(unknown)}")
    if getattr(args, "func", None) is None:
        usage_of = getattr(args, "usage_of", parser)
        usage_of.print_usage(sys.stderr)
        what = "a reproduction NAME" if args.command == "reproduce" else "a command"
        print(f"{usage_of.prog}: error: {what} is required", file=sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except _UnavailableError as exc:
        print(f"robustsvm: error: {_one_line(exc)}", file=sys.stderr)
        return 1
    except (ValueError, TypeError, KeyError, OSError, ImportError, SolverError) as exc:
        # anything the package refuses, a missing file, a failed solve: one line, no traceback
        print(f"robustsvm {args.command}: error: {_one_line(exc)}{_cli_hint(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"robustsvm {args.command}: interrupted", file=sys.stderr)
        return 130


def _subcommand_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub)command ``args`` ran: ``robustsvm``, ``robustsvm COMMAND`` or ``reproduce NAME``."""
    for key in ("command", "name"):
        choices = next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        value = getattr(args, key, None)
        if not choices or value not in choices:
            break
        parser = choices[value]
    return parser


def _one_line(exc: BaseException) -> str:
    """The exception's message on one line (a ``KeyError`` as ``missing key 'name'``)."""
    text = f"missing key {exc.args[0]!r}" if isinstance(exc, KeyError) and exc.args else str(exc)
    return " ".join(text.split()) or type(exc).__name__


def _cli_hint(exc: BaseException) -> str:
    """The command-line spelling of advice given in Python syntax."""
    text = str(exc)
    if "intercept=rs.L2" in text or "intercept=False" in text:
        return " (on the command line: --intercept none or --intercept ridge:MU)"
    return ""
