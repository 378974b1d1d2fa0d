"""The judge layer: the rule judge and a pluggable, advisory, off-by-default LLM-judge adapter.

* :func:`apply_rules` — rubric-v2's six ordered decision rules over the pre-computed facts
  (the deterministic baseline rater; never a deterministic dimension of a record).
* :func:`build_prompt` / :func:`parse_response` — the untrusted-data fenced prompt and the
  strict reply parser (judge dimensions are always ``advisory: true``, ``uncalibrated``).
* :class:`Judge` and its adapters :class:`CallableJudge`, :class:`ReplayJudge`,
  :class:`RulesJudge`; :func:`judge_record` (budget gate before dispatch) and
  :func:`merge_judge`. A judge that raises is wrapped in :class:`JudgeDispatchError` (no
  judge dimension is added). Nothing here opens a network connection.
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
