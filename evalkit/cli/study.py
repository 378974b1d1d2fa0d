"""``evalkit study run NAME [-p KEY VALUE]... [-f params.yaml] [--out DIR]`` and ``study list``.

A run is checked against the pre-registration lock before any kernel starts: a changed
rubric, gold set or decision rule, or a design parameter whose value differs from the locked
one, refuses the run (exit 1, naming it). ``--deviation "why"`` runs a changed design as a
stated deviation; ``--no-lock`` runs without a lock, as not pre-registered. Both are shown at
the top of the page and in results.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from evalkit import studies
from evalkit.cli.main import SUBCOMMANDS
from evalkit.files.input import escape_surrogates
from evalkit.fleet.score import SCHEDULER_TRUST
from evalkit.prereg import study_params


def register(subparsers: Any) -> None:
    """Add the ``study`` command with its ``run`` and ``list`` subcommands."""
    parser = subparsers.add_parser(
        "study",
        help=SUBCOMMANDS["study"],
        description="Run study notebooks (papermill) and render them to offline HTML.",
    )
    sub = parser.add_subparsers(dest="study_command", metavar="SUBCOMMAND")
    run = sub.add_parser(
        "run",
        help="execute one study",
        description="Execute one study notebook under the pre-registration lock. Design "
        "parameters (every parameter not ending in _dir/_path) must have their locked values; "
        "data inputs (*_dir, *_path) may be given freely and their content is hashed into "
        "results.json. A data input that names nothing (no such directory, no file or glob "
        "match) exits 1 before any kernel starts.",
    )
    run.add_argument("name", help="study name (see `evalkit study list`)")
    run.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        metavar=("KEY", "VALUE"),
        default=[],
        help="set a declared parameter (repeatable); VALUE is converted to the declared type",
    )
    run.add_argument(
        "-f",
        "--parameters-file",
        metavar="FILE",
        help="YAML/JSON mapping of parameters; values must be JSON values (no !!binary, "
        "!!set, dates, NaN); a missing, unreadable or non-regular FILE exits 1",
    )
    run.add_argument(
        "--deviation",
        metavar="WHY",
        help="run although design parameters differ from the pre-registration; WHY is shown "
        "at the top of the page and written into results.json",
    )
    run.add_argument(
        "--no-lock",
        action="store_true",
        help="run without checking the pre-registration lock; the page and results.json "
        "state that the run is not pre-registered",
    )
    run.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="compute a fleet study on the Dask scheduler at ADDRESS (tcp://host:8786); only "
        f"here, never from -p or -f. Trust: {SCHEDULER_TRUST}. The page names it",
    )
    run.add_argument("--out", metavar="DIR", help="output directory (default reports/NAME)")
    run.add_argument("--timeout", type=int, default=600, help="per-cell timeout in seconds")
    run.set_defaults(func=_run)
    lst = sub.add_parser("list", help="list the studies and their parameters")
    lst.add_argument("--json", action="store_true", help="one JSON object per line")
    lst.set_defaults(func=_list)
    parser.set_defaults(func=_help(parser))


def _help(parser: argparse.ArgumentParser) -> Any:
    def show(_args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return 1

    return show


def load_parameters_file(path: str) -> dict[str, Any]:
    """A YAML (or JSON) mapping of parameter name -> JSON value, checked all the way down.

    See :func:`evalkit.prereg.study_params.load_parameters_file`: a regular file only (a FIFO or a
    device is refused, never a hang), bounded, UTF-8; a value JSON cannot hold is refused
    with its path. Every problem is an ``EvalkitError`` naming the file (exit 1).
    """
    return study_params.load_parameters_file(Path(path))


def _run(args: argparse.Namespace) -> int:
    from evalkit.cli.common import output_path

    if args.out is not None:  # before any kernel: never a folder no output flag writes into
        output_path(Path(args.out) / "index.html", "--out")
    params: dict[str, Any] = {}
    if args.parameters_file:
        params.update(load_parameters_file(args.parameters_file))
    for key, raw in args.parameter:
        params[key] = studies.coerce_cli_value(args.name, key, raw)
    run = studies.run_study(
        args.name,
        params,
        out_dir=args.out,
        timeout=args.timeout,
        deviation=args.deviation,
        no_lock=args.no_lock,
        scheduler=args.scheduler,
    )
    print(
        json.dumps(
            {
                "study": run.study,
                "status": run.status.value,
                "html": str(run.html),
                "results": str(run.results_path),
                "preregistration": run.results["preregistration"]["status"],
            }
        )
    )
    if not run.ok:
        print(f"evalkit study: {run.study} failed: {escape_surrogates(str(run.error))}",
              file=sys.stderr)  # fmt: skip
        return 1
    return 0


def _list(args: argparse.Namespace) -> int:
    for info in studies.list_studies():
        params = studies.declared_parameters(info["name"]) if info["exists"] else {}
        if args.json:
            info = dict(info)
            info["parameters"] = [
                {
                    "name": p.name,
                    "type": p.type,
                    "default": p.default,
                    "help": p.help,
                    "role": p.role,
                }
                for p in params.values()
            ]
            print(json.dumps(info))
            continue
        print(f"{info['name']}: {info['title']}")
        for p in params.values():
            role = p.role
            print(f"    {p.name} ({p.type}, {role}) = {json.dumps(p.default)}  {p.help}")
    return 0
