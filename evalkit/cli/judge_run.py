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
from evalkit.judge.specs import DEFAULT_MAX_CONSECUTIVE_ERRORS

__all__ = [
    "EXIT_UNANSWERED",
    "add_call_parameters",
    "add_record_judge",
    "call_defaults",
    "record_judge",
    "register_run",
    "run_judges",
]

#: Exit code of a judge run that left an (item, repeat, judge) without an answer.
EXIT_UNANSWERED = 4

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
an error outcome, never as a label. The run holds the run log exclusively: a second run on the
same --out refuses (exit 1) instead of asking the same calls again.

Bounds: --timeout is a whole-call deadline (retries included, however slowly a server sends);
a reply over 16 x --max-tokens characters, or a body over its byte cap, is the error
reply-too-large (its text stored cut to the cap). After --max-consecutive-errors connection
failures or timeouts in a row (default 20) no new call starts and the run says so, naming the
base URL it sent to (its --base-url, else OPENAI_BASE_URL / ANTHROPIC_BASE_URL, else the
SDK's default; after a redirect, each line's url is the one that answered).

--judge replay:RUNLOG without --repeats replays every repeat the log holds.

Exit 0 when every (item, repeat, judge) has an answer (a label or cannot-parse), 4 when any is
left unanswered (error outcomes, or calls not made after a stop; the same command retries
them), 1 on a user error (a held run log among them), 2 when the run log cannot be written."""


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


def add_call_parameters(calls: Any) -> None:
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
        help="whole-call deadline, retries included (default 600 s)",
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
    calls.add_argument(
        "--concurrency",
        type=_positive_int,
        default=4,
        metavar="N",
        help="calls in flight at most (default 4)",
    )
    calls.add_argument(
        "--max-consecutive-errors",
        type=_positive_int,
        default=DEFAULT_MAX_CONSECUTIVE_ERRORS,
        metavar="N",
        help="stop starting calls after N connection failures or timeouts in a row "
        f"(default {DEFAULT_MAX_CONSECUTIVE_ERRORS})",
    )
    calls.add_argument(
        "--budget",
        type=_positive_int,
        default=8000,
        metavar="TOKENS",
        help="refuse (never truncate) prompts over ~TOKENS (len/4; default 8000)",
    )


def call_defaults(args: argparse.Namespace) -> Any:
    """The :class:`~evalkit.judge.specs.JudgeParams` the call flags give every judge."""
    from evalkit.judge.specs import JudgeParams, check_params

    return check_params(
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
        default=None,
        metavar="K",
        help="answers per item and judge (default 1; a replay alone: every repeat of its log)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="RUNLOG",
        help="the run log (JSON lines; appended to, and resumed from)",
    )
    add_call_parameters(parser.add_argument_group("call parameters (defaults of every judge)"))
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


def add_record_judge(parser: Any) -> None:
    """The flags of ``score --journal --judge SPEC`` (a judge at record time)."""
    group = parser.add_argument_group(
        "judge at record time (--journal --judge SPEC): judge dimensions into every record"
    )
    group.add_argument(
        "--judge",
        metavar="SPEC",
        help="openai:MODEL, anthropic:MODEL, replay:RUNLOG or rules; every record gets its "
        "rubric's judge dimensions, each naming its judge, calls and calibration (needs a "
        "journal). A record whose calls are not all answered is held back: exit 4",
    )
    group.add_argument(
        "--repeats",
        type=_positive_int,
        default=None,
        metavar="K",
        help="calls per record (default 1; the verdict is the first call that gives a label)",
    )
    group.add_argument(
        "--judge-log",
        type=Path,
        metavar="FILE",
        help="the run log of the judge's calls (default <journal stem>.judge.jsonl beside the "
        "journal; appended to and resumed from: a rerun asks no call twice)",
    )
    add_call_parameters(group)


def record_judge(args: argparse.Namespace, journal: Path, calibrations: Any) -> Any:
    """The :class:`~evalkit.judge.record_judge.ModelRecordJudge` of ``--judge`` (not entered).

    ``calibrations`` (the repository's, :class:`~evalkit.calibration.RepositoryCalibrations`)
    decides each judge dimension's calibration status.
    """
    from evalkit.judge.model_judge import build_judges
    from evalkit.judge.record_judge import ModelRecordJudge, runlog_for
    from evalkit.judge.specs import parse_spec

    spec = parse_spec(args.judge, call_defaults(args))
    [judge], redact = build_judges([spec])
    repeats = _repeats(args, [judge])
    run_log = args.judge_log if args.judge_log is not None else runlog_for(journal)
    from evalkit.cli.common import output_path

    # the run log is appended to: never the journal, its ledger, a gold file or the lock
    output_path(run_log, "--judge-log", metrics_dirs=[journal.parent], inputs=[journal])
    return ModelRecordJudge(
        judge,
        repeats=repeats,
        run_log=run_log,
        journal=journal,
        calibration=calibrations.for_judge,
        concurrency=args.concurrency,
        budget=args.budget,
        redact=redact,
        max_consecutive_errors=args.max_consecutive_errors,
        progress=not getattr(args, "no_progress", False),
    )


def held_back_message(judge: Any, held: int, prog: str) -> str:
    """What to say when ``held`` records were held back: why, where, and how to retry."""
    summary = judge.summary
    why = summary.stopped or (
        f"the first error: {summary.first_error}" if summary.first_error else ""
    )
    return (
        f"{prog}: error: {held} record(s) held back, not written: their judge calls did not all "
        f"get an answer ({why}); run log {judge.run_log}; the same command retries them"
    )


def _source(args: argparse.Namespace) -> Any:
    from evalkit.cli.common import read_journal
    from evalkit.judge.items import gold_items, journal_items

    if args.gold is not None:
        if args.run_id:
            raise EvalkitError("--run-id selects journal records; it needs --journal")
        return gold_items(args.gold)
    return journal_items(read_journal(args.journal), args.run_id)


def _repeats(args: argparse.Namespace, judges: list[Any]) -> int:
    """``--repeats``, else every repeat of the replayed logs (replays alone), else 1."""
    if args.repeats is not None:
        return int(args.repeats)
    replays = [getattr(j, "repeats", None) for j in judges]
    counts = [r for r in replays if isinstance(r, int)]
    return max(1, *counts) if replays and len(counts) == len(replays) else 1


def run_judges(args: argparse.Namespace) -> int:
    """``evalkit judge run``: plan, call, record, summarize."""
    from evalkit.judge.runlog import lock_runlog

    defaults = call_defaults(args)
    from evalkit.judge.specs import parse_spec

    specs = [parse_spec(text, defaults) for text in args.judge]
    names = [spec.name for spec in specs]
    if len(set(names)) != len(names):
        raise EvalkitError(f"the same judge is named twice: {', '.join(names)}")
    _check_out(args)
    source = _source(args)
    from evalkit.judge.model_judge import build_judges

    judges, redact = build_judges(specs)  # a missing SDK is named before anything is written
    with lock_runlog(args.out):  # held from the plan to the last line: no call asked twice
        return _run_locked(args, judges, redact, source)


def _run_locked(args: argparse.Namespace, judges: list[Any], redact: Any, source: Any) -> int:
    from evalkit.files.append import LineAppender
    from evalkit.judge.runlog import RUNLOG_LINES, read_runlog
    from evalkit.judge.runner import RunSummary, plan_calls, run_calls

    log = read_runlog(args.out, missing_ok=True)
    for problem in log.diagnostics:
        print(f"evalkit judge run: {args.out}: {problem} (skipped)", file=sys.stderr)
    repeats = _repeats(args, judges)
    calls, skipped = plan_calls(source, judges, repeats, log)
    summary = RunSummary(total=len(source.items) * repeats * len(judges), skipped=skipped)
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
                    max_consecutive_errors=args.max_consecutive_errors,
                )
        except KeyboardInterrupt:
            interrupted = True
        except OSError:  # the log stopped growing: say what it holds, then exit 2
            print(f"evalkit judge run: {summary.line()}; run log {args.out}", file=sys.stderr)
            raise
    print(f"evalkit judge run: {summary.line()}; run log {args.out}", file=sys.stderr)
    if interrupted:
        print("evalkit judge run: interrupted; the same command resumes", file=sys.stderr)
        return 1
    return _outcome(summary)


def _outcome(summary: Any) -> int:
    """0 when every call of the run has an answer; else say what is missing, exit 4."""
    if not summary.unanswered:
        return 0
    errors = summary.outcomes["error"]
    parts = []
    if errors:
        parts.append(f"{errors} call(s) ended in an error (recorded, not labels)")
    not_made = summary.total - summary.skipped - summary.calls
    if not_made:
        parts.append(f"{not_made} call(s) were not made")
    first = f"; the first error: {summary.first_error}" if summary.first_error else ""
    print(
        f"evalkit judge run: error: {summary.unanswered} (item, repeat, judge) left without an "
        f"answer: {', '.join(parts)}{first}; the same command retries them",
        file=sys.stderr,
    )
    return EXIT_UNANSWERED
