"""``evalkit study run NAME [-p KEY VALUE]... [-f params.yaml] [--out DIR]`` and ``study list``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.file_errors import input_file_error


def register(subparsers: Any) -> None:
    """Add the ``study`` command with its ``run`` and ``list`` subcommands."""
    parser = subparsers.add_parser(
        "study",
        help="run a parameterized study notebook into HTML + results.json",
        description="Run study notebooks (papermill) and render them to offline HTML.",
    )
    sub = parser.add_subparsers(dest="study_command", metavar="SUBCOMMAND")
    run = sub.add_parser("run", help="execute one study")
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
        help="YAML/JSON mapping of parameters (a missing or unreadable FILE exits 1)",
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
    """A YAML (or JSON) mapping of parameter name -> value.

    A missing, unreadable or non-UTF-8 file, or a directory, is the user's to fix: an
    ``EvalkitError`` naming the file (exit 1), never an I/O failure (exit 2).
    """
    import yaml

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise input_file_error(exc, "parameters file", p) from exc
    except UnicodeDecodeError as exc:
        raise EvalkitError(f"parameters file {str(p)!r}: not UTF-8 text ({exc.reason})") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise EvalkitError(f"{p}: not valid YAML: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise EvalkitError(f"{p}: expected a mapping of parameter names to values")
    return {str(k): v for k, v in data.items()}


def _run(args: argparse.Namespace) -> int:
    from evalkit import studies

    params: dict[str, Any] = {}
    if args.parameters_file:
        params.update(load_parameters_file(args.parameters_file))
    for key, raw in args.parameter:
        params[key] = studies.coerce_cli_value(args.name, key, raw)
    run = studies.run_study(args.name, params, out_dir=args.out, timeout=args.timeout)
    print(
        json.dumps(
            {
                "study": run.study,
                "status": run.status.value,
                "html": str(run.html),
                "results": str(run.results_path),
            }
        )
    )
    if not run.ok:
        print(f"evalkit study: {run.study} failed: {run.error}", file=sys.stderr)
        return 1
    return 0


def _list(args: argparse.Namespace) -> int:
    from evalkit import studies

    for info in studies.list_studies():
        params = studies.declared_parameters(info["name"]) if info["exists"] else {}
        if args.json:
            info = dict(info)
            info["parameters"] = [
                {"name": p.name, "type": p.type, "default": p.default, "help": p.help}
                for p in params.values()
            ]
            print(json.dumps(info))
            continue
        print(f"{info['name']}: {info['title']}")
        for p in params.values():
            print(f"    {p.name} ({p.type}) = {json.dumps(p.default)}  {p.help}")
    return 0
