"""The judge layer: the rule judge and a pluggable, advisory, off-by-default LLM-judge adapter.

* :func:`apply_rules` — rubric-v2's six ordered decision rules over the pre-computed facts
  (the deterministic baseline rater; never a deterministic dimension of a record).
* :func:`build_prompt` / :func:`parse_response` — the untrusted-data fenced prompt and the
  strict reply parser (parsed judge dimensions are ``advisory: true``, ``uncalibrated``).
* :class:`Judge` and its adapters :class:`CallableJudge`, :class:`ReplayJudge`,
  :class:`RulesJudge`; :func:`judge_record` (budget gate before dispatch) and
  :func:`merge_judge`. A judge that raises is wrapped in :class:`JudgeDispatchError` (no
  judge dimension is added). None of these opens a network connection.

Model judges (``evalkit judge run``) live in their own modules, imported only when used:
:mod:`~evalkit.judge.specs` (``openai:MODEL`` / ``anthropic:MODEL`` / ``replay:RUNLOG``),
:mod:`~evalkit.judge.clients` (the official SDKs, extra ``evalkit[judges]``),
:mod:`~evalkit.judge.runner` (K repeats, bounded concurrency, resume),
:mod:`~evalkit.judge.runlog` (the run log, its reader and long-format labels),
:mod:`~evalkit.judge.reply` (a reply into a label or ``cannot-parse``),
:mod:`~evalkit.judge.consistency` (repeat consistency and kappa against gold),
:mod:`~evalkit.judge.record_judge` (judging records while they are written: judge dimensions
that name their judge, their run-log lines and a calibration bound to that judge; see
docs/JUDGES.md) and :mod:`~evalkit.judge.scripted_server` (a loopback server speaking both
wire protocols).
"""

from __future__ import annotations

from evalkit.judge.adapters import CallableJudge, Judge, ReplayJudge, RulesJudge
from evalkit.judge.parse import JudgeResponseError, parse_response
from evalkit.judge.prompt import TokenBudgetExceeded, build_prompt
from evalkit.judge.rules import RuleVerdict, VerdictStatus, apply_rules
from evalkit.judge.run import JudgeDispatchError, judge_record, merge_judge

__all__ = [
    "CallableJudge",
    "Judge",
    "JudgeDispatchError",
    "JudgeResponseError",
    "ReplayJudge",
    "RuleVerdict",
    "RulesJudge",
    "TokenBudgetExceeded",
    "VerdictStatus",
    "apply_rules",
    "build_prompt",
    "judge_record",
    "merge_judge",
    "parse_response",
]
