"""``evalkit judge run``: model judges over gold items or journal records, into a run log.

Registered under ``evalkit judge`` by :mod:`evalkit.cli.judge`. The work is done by
:mod:`evalkit.judge.runner`; this module parses the options, prints the summary and maps the
outcome to an exit code (see :mod:`evalkit.cli.judge`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from evalkit.errors import EvalkitError

__all__ = ["register_run", "run_judges"]

_DESCRIPTION = """\
Run model judges over every gold item (--gold) or journal record (--journal) K times each
(--repeats) and append one line per (item, repeat, judge) to the run log --out: item id,
repeat, judge spec and parameters, the model id the API reported, prompt sha256 and nonce, the
reply text or the error (kind and message), the label or cannot-parse with the reason, tokens,
latency, timestamp. The prompt is evalkit's fenced judge prompt (facts outside the fence).

Judges (--judge, repeatable; several judges are label families of one study):
  openai:MODEL       chat completions API of any OpenAI-compatible server (OpenAI, vLLM,
                     llama.cpp server, Ollama, LM Studio), via the openai SDK
  anthropic:MODEL    Messages API, via the anthropic SDK
  replay:RUNLOG      answers from a run log, no network (RUNLOG#SPEC picks one judge of it)
Per-judge parameters follow the model: openai:m,base_url=URL,temperature=0.2 (keys base_url,
temperature, max_tokens, seed, timeout, max_retries, api_key_env); the flags below are the
defaults of every judge. Model judges need the extra: pip install 'evalkit[judges]'.

Base URLs: openai base URLs end in /v1 (a bare http://host:port gets /v1 appended);
anthropic base URLs have no /v1 (a trailing /v1 is removed). Any other path is used as given.

API keys: from OPENAI_API_KEY / ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), or the variable
named by --api-key-env. With none set, a placeholder key is sent (a local server without keys
accepts it) and stderr says so. A key is never written to the run log, stderr or a message.

Resume: the same command again skips every (item, repeat, judge) the log already answered
(a label or cannot-parse); an ERROR outcome is not an answer and is called again. A killed run
loses at most the calls in flight. Retries and backoff (429 with Retry-After, 5xx, timeouts,
dropped connections) are the SDK's own (--max-retries); a call that still fails is recorded as
an error outcome, never as a label.

Exit 0 when the calls made got at least one reply (errors are in the log: rerun to retry them),
1 on a user error or when every call made failed, 2 when the run log cannot be written."""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _temperature(text: str) -> float | None:
    if text.strip().lower() == "none":
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number or 'none'") from None


def _add_call_parameters(calls: Any) -> None:
    """The flags of the judges' call parameters (the defaults of every --judge)."""
    calls.add_argument("--base-url", metavar="URL", help="the API's base URL (see above)")
    calls.add_argument(
        "--temperature",
        type=_temperature,
        default=0.0,
        help="sampling temperature (default 0; 'none' sends none: the API's default)",
    )
    calls.add_argument(
        "--max-tokens",
        type=_positive_int,
        default=1024,
        metavar="N",
        help="reply token limit (default 1024)",
    )
    calls.add_argument("--seed", type=int, help="sampling seed (openai only; default none)")
    calls.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="per-request timeout (default: the SDK's, 600 s)",
    )
    calls.add_argument(
        "--max-retries",
        type=int,
        default=2,
        metavar="N",
        help="the SDK's retries of a failed request (default 2)",
    )
    calls.add_argument(
        "--api-key-env", metavar="NAME", help="environment variable holding the API key"
    )


def register_run(commands: Any) -> None:
    """Add ``evalkit judge run``."""
    parser = commands.add_parser(
        "run",
        help="run model judges over gold items or journal records into a run log",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--gold", metavar="DIR", help="a gold set folder (every item)")
    source.add_argument("--journal", type=Path, metavar="FILE", help="a journal (eval.jsonl)")
    parser.add_argument(
        "--run-id",
        action="append",
        default=[],
        metavar="ID",
        help="with --journal: judge only this run id (repeatable)",
    )
    parser.add_argument(
        "--judge",
        action="append",
        required=True,
        metavar="SPEC",
        help="openai:MODEL, anthropic:MODEL or replay:RUNLOG (repeatable)",
    )
    parser.add_argument(
        "--repeats",
        type=_positive_int,
        default=1,
        metavar="K",
        help="answers per item and judge (default 1)",
    )
    parser.add_argument(
        "--concurrency",
        type=_positive_int,
        default=4,
        metavar="N",
        help="calls in flight at most (default 4)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="RUNLOG",
        help="the run log (JSON lines; appended to, and resumed from)",
    )
    _add_call_parameters(parser.add_argument_group("call parameters (defaults of every judge)"))
    parser.add_argument(
        "--budget",
        type=_positive_int,
        default=8000,
        metavar="TOKENS",
        help="refuse (never truncate) prompts over ~TOKENS (len/4; default 8000)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(func=run_judges)


def _check_out(args: argparse.Namespace) -> None:
    """Refuse a run log no output flag may write (the journal, its ledger, a gold file...).

    An existing run log is appended to: its first line must be one of ours (RUNLOG_LINES).
    """
    from evalkit.cli.common import output_path

    journal = [] if args.gold is not None else [args.journal]
    output_path(
        args.out,
        "--out",
        metrics_dirs=[Path(j).parent for j in journal],
        gold=[] if args.gold is None else [args.gold],
        inputs=journal,
    )


def _source(args: argparse.Namespace) -> Any:
    from evalkit.cli.common import read_journal
    from evalkit.judge.items import gold_items, journal_items

    if args.gold is not None:
        if args.run_id:
            raise EvalkitError("--run-id selects journal records; it needs --journal")
        return gold_items(args.gold)
    return journal_items(read_journal(args.journal), args.run_id)


def run_judges(args: argparse.Namespace) -> int:
    """``evalkit judge run``: plan, call, record, summarize."""
    from evalkit.files.append import LineAppender
    from evalkit.judge.model_judge import build_judges
    from evalkit.judge.runlog import RUNLOG_LINES, read_runlog
    from evalkit.judge.runner import RunSummary, plan_calls, run_calls
    from evalkit.judge.specs import JudgeParams, check_params, parse_spec

    defaults = check_params(
        JudgeParams(
            base_url=args.base_url,
            temperature=args.temperature,
            max_tokens=args.max_tokens,
            seed=args.seed,
            timeout=args.timeout,
            max_retries=args.max_retries,
            api_key_env=args.api_key_env,
        )
    )
    specs = [parse_spec(text, defaults) for text in args.judge]
    _check_out(args)
    source = _source(args)
    log = read_runlog(args.out, missing_ok=True)
    for problem in log.diagnostics:
        print(f"evalkit judge run: {args.out}: {problem} (skipped)", file=sys.stderr)
    judges, redact = build_judges(specs)
    calls, skipped = plan_calls(source, judges, args.repeats, log)
    summary = RunSummary(total=len(source.items) * args.repeats * len(judges), skipped=skipped)
    interrupted = False
    if calls:
        try:
            with LineAppender(args.out, "run log", RUNLOG_LINES) as appender:
                run_calls(
                    calls,
                    source=source,
                    appender=appender,
                    summary=summary,
                    concurrency=args.concurrency,
                    redact=redact,
                    budget=args.budget,
                    progress=not args.quiet,
                )
        except KeyboardInterrupt:
            interrupted = True
        except OSError:  # the log stopped growing: say what it holds, then exit 2
            print(f"evalkit judge run: {summary.line()}; run log {args.out}", file=sys.stderr)
            raise
    print(f"evalkit judge run: {summary.line()}; run log {args.out}", file=sys.stderr)
    errors = summary.outcomes["error"]
    if interrupted:
        print("evalkit judge run: interrupted; the same command resumes", file=sys.stderr)
        return 1
    if errors:
        print(
            f"evalkit judge run: {errors} call(s) ended in an error (recorded, not labels); "
            "the same command retries them",
            file=sys.stderr,
        )
    if summary.calls and errors == summary.calls:
        print(
            "evalkit judge run: error: every call failed, no reply came; the first: "
            f"{summary.first_error}",
            file=sys.stderr,
        )
        return 1
    return 0
