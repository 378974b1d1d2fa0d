"""Write the study notebooks (nbformat v4, no outputs, deterministic cell ids).

Run: ``python notebooks/build_notebooks.py``. Every code cell is tagged ``hide-input`` so the
rendered HTML shows results, not code; the one cell tagged ``parameters`` holds JSON-simple
defaults (the runner injects the values of a run after it). All logic lives in
``evalkit.analyses``; text from the data reaches Markdown only through ``evalkit.files.escape``.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

SETUP = """\
import warnings

from IPython.display import Markdown, display

from evalkit import analyses
from evalkit.files.escape import markdown_code

warnings.filterwarnings("ignore", category=FutureWarning)
analyses.configure_display()
"""


def _nb(name: str, cells: list[tuple[str, str]]) -> nbformat.NotebookNode:
    nb = new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    for i, (kind, src) in enumerate(cells):
        if kind == "md":
            cell = new_markdown_cell(src.strip())
        else:
            cell = new_code_cell(src.strip())
            cell.metadata["tags"] = ["parameters"] if kind == "params" else ["hide-input"]
        cell["id"] = f"{name}-{i:02d}"
        nb.cells.append(cell)
    return nb


def fleet_view(study: str) -> str:
    """The section *Across repositories* of a fleet (nothing for one metrics directory): the
    same on both fleet pages; ``study`` is the alias of the study's fleet module."""
    return f"""
if fleet is not None:
    display(Markdown(fp.SECTION_HEADING))
    display(Markdown(fp.view_text(signals, {study}.VIEW_TEXT)))
    display(fp.summary_frame(signals))
    display(Markdown(fp.PER_REPOSITORY_CAPTION))
    display(fp.per_repository_frame(signals))
    for heading, forest, loo in fp.heterogeneity(signals):
        display(Markdown(heading))
        display(forest)
        display(loo)
"""


THRESHOLD = [
    (
        "md",
        """
# Threshold study: where would "fact ≥ t" put a signal?

For one fact per journal record (default `guard_blocked`, read from each record's dimensions
through `evalkit.compute_facts` — for rubric-v1 records from the `process-safety` evidence) this
page shows the observed distribution and its gaps, the fire-rate curve of the rule "fact ≥ t"
with cluster-bootstrap 95% intervals (whole sessions resampled, because two records of one
session are not independent), the ceiling check against the ~10% a signal may fire at, and the
counterfactual table "threshold t → records firing, sessions failing" (a session fails when any
of its records fires).

With the default parameters the data are the synthetic preset `rubric-v2-2026-09-19`
(see `docs/DATA_CARD.md`), built to reproduce the measurement rubric-v2 reports.
""",
    ),
    (
        "params",
        """
metrics_dir: str = ""  # metrics directory holding eval.jsonl; "" builds the preset into a temp dir
metrics_dirs: list | str = []  # a fleet instead: metrics directories (a list, a glob such as "repos/*/metrics", or a file listing one per line); [] = the one metrics_dir
scheduler: str = ""  # Dask scheduler address to read the fleet's journals on (where it runs, not what: the same results); "" = serially in the kernel
fact: str = "guard_blocked"  # numeric fact read per record
thresholds: list = [1, 3, 6, 20]  # candidate thresholds for the counterfactual table
ceiling: float = 0.1  # largest fire rate a signal may have (HR-101, ~10%)
n_resamples: int = 1000  # cluster-bootstrap resamples
seed: int = 20260919  # bootstrap seed
v1_prose_fallback: bool = True  # read rubric-v1 prose "(0 blocked, ..." where the facts readers give null
""",
    ),
    (
        "code",
        SETUP
        + "from evalkit.analyses import fleet_page as fp\n"
        + "from evalkit.analyses import threshold as th\n"
        + "from evalkit.analyses import threshold_fleet as tf\n",
    ),
    (
        "code",
        """
fleet = fp.resolve(metrics_dir, metrics_dirs, scheduler)  # None: the one metrics_dir
if fleet is None:
    data_dir = analyses.default_metrics_dir(metrics_dir)
display(analyses.show_parameters(fp.shown({"metrics_dir": metrics_dir, "fact": fact,
        "thresholds": thresholds, "ceiling": ceiling, "n_resamples": n_resamples, "seed": seed,
        "v1_prose_fallback": v1_prose_fallback}, metrics_dirs, scheduler)))
""",
    ),
    ("md", "## The records read\n\nOne row per journal record; `value` is the fact."),
    (
        "code",
        """
share_ci = None
if fleet is None:
    df = th.fact_table(data_dir, fact, v1_prose_fallback=v1_prose_fallback)
else:
    df = tf.fact_table(fleet, fact, v1_prose_fallback=v1_prose_fallback, scheduler=scheduler)
    display(Markdown(fp.fleet_note(df, scheduler, "journals read")))
    display(fp.repositories_frame(df, "records"))
    share_ci = tf.v1_fail_share(df, level=th.LEVEL, n_resamples=n_resamples, seed=seed)
pub = th.published_table(df)
display(Markdown(th.records_text(df, pub, share_ci=share_ci)))
display(Markdown(th.value_sources_text(th.value_sources(df))))
caption, preview = th.records_preview(fp.without_paths(df))
display(Markdown(caption))
display(preview)
""",
    ),
    ("md", "## Distribution and gaps"),
    (
        "code",
        """
display(th.plot_distribution(df, fact, thresholds))
bins = th.distribution_bins(df)
display(Markdown(th.bins_text(df, bins)))
st = th.study(df, ceiling=ceiling, n_resamples=n_resamples, seed=seed,
              cluster_column=tf.cluster_column(fleet))
display(Markdown(th.gaps_text(st)))
""",
    ),
    ("md", "## Fire-rate curve"),
    (
        "code",
        """
if fleet is None:
    display(Markdown(th.fire_rate_caption(st)))
    display(th.plot_fire_rate(st, fact))
else:
    display(Markdown(tf.fire_rate_caption(st)))
    display(tf.plot_fire_rate(st, fact))
""",
    ),
    ("md", "## Counterfactual table and ceiling check"),
    (
        "code",
        """
signals = None
if fleet is not None:
    signals = tf.fire_rates(df, thresholds, ceiling=ceiling, level=th.LEVEL,
                            n_resamples=n_resamples, seed=seed)
cf = th.counterfactual(df, thresholds)
table = th.counterfactual_frame(cf, st, sessions=tf.session_intervals(signals))
display(table)
display(Markdown(th.ceiling_text(cf, st, ceiling)))
""",
    ),
    ("code", fleet_view("tf")),
    (
        "code",
        """
figures = th.figures(df, pub, cf, table, bins, st)
if fleet is not None:
    figures = fp.with_fleet(figures, signals, **tf.figures_extra(
        df, n_resamples=n_resamples, seed=seed, level=th.LEVEL))
_ = analyses.write_results(figures)
""",
    ),
    (
        "md",
        """
## What this does not show

- A fire rate inside the ceiling does not make a threshold right; it only means the signal is
  allowed to speak. Whether a blocked command is misconduct is a question of meaning, and
  rubric-v2 answers it: a block is prevented damage (decision rule 3).
- The intervals treat the sessions as a sample from one working style; they say nothing about
  other repositories or other coordinators.
- The default data are synthetic (see the data card); they reproduce published counts, not the
  sessions behind them.
""",
    ),
]

REPLAY = [
    (
        "md",
        """
# Rubric replay: one ledger under rubric-v1 and rubric-v2

Every eligible session of the ledger is scored under both rubrics with
`evalkit.score_ledger`. Shown: per-dimension status rates with Wilson 95% intervals and their n,
the session × dimension verdicts that changed between the rubrics and why, and dead-instrument
flags — a status class far above the ~10% ceiling (its whole interval above it), or a graded
dimension that never fails (0%).
""",
    ),
    (
        "params",
        """
metrics_dir: str = ""  # metrics directory; "" builds the preset rubric-v2-2026-09-19 into a temp dir
metrics_dirs: list | str = []  # a fleet instead: metrics directories (a list, a glob such as "repos/*/metrics", or a file listing one per line); [] = the one metrics_dir
scheduler: str = ""  # Dask scheduler address to score the fleet on (where it runs, not what: the same results); "" = serially in the kernel
ceiling: float = 0.1  # ceiling for the dead-instrument flag (HR-101, ~10%)
""",
    ),
    (
        "code",
        SETUP
        + "from evalkit.analyses import fleet_page as fp\n"
        + "from evalkit.analyses import replay\n"
        + "from evalkit.analyses import replay_fleet as rf\n",
    ),
    (
        "code",
        """
fleet = fp.resolve(metrics_dir, metrics_dirs, scheduler)  # None: the one metrics_dir
if fleet is None:
    data_dir = analyses.default_metrics_dir(metrics_dir)
display(analyses.show_parameters(fp.shown({"metrics_dir": metrics_dir, "ceiling": ceiling},
                                          metrics_dirs, scheduler)))
if fleet is None:
    scored = replay.score_both(data_dir)
else:
    scored = rf.score_both(fleet, scheduler)
    display(Markdown(fp.fleet_note(scored, scheduler, "scored")))
    display(fp.repositories_frame(scored))
n_sessions = replay.sessions_scored(scored)
display(Markdown(replay.sessions_text(n_sessions)))
""",
    ),
    ("md", "## Status rates per dimension"),
    (
        "code",
        """
if fleet is None:
    rates = replay.status_rates(scored)
    display(Markdown(replay.RATES_CAPTION))
    display(replay.rate_matrix(rates))
    display(replay.plot_rates(rates, "fail", ceiling))
else:
    rates = rf.status_rates(scored)
    display(Markdown(rf.rates_caption(scored)))
    display(replay.rate_matrix(rates))
    display(rf.plot_rates(rates, ceiling, scored))
""",
    ),
    ("md", "## Verdicts that changed between the rubrics"),
    (
        "code",
        """
changed = replay.changed_verdicts(scored)
display(Markdown(replay.changed_text(changed, scored)))
display(replay.changed_summary(changed))
caption, detail = replay.changed_detail(changed)
display(Markdown(caption))
display(detail)
""",
    ),
    (
        "md",
        """
## Stored verdicts against today's replay

The journal holds what was measured when each session was scored. Replaying the same rubric on
today's ledger can differ when the ledger changed since — most often because events were rotated
into `_archive/`, which the rubric-v1 engine never reads.
""",
    ),
    (
        "code",
        """
if fleet is None:
    drift = replay.journal_vs_replay(data_dir, scored)
    display(Markdown(replay.drift_text(drift)))
else:
    drift = rf.journal_vs_replay(scored)
    display(Markdown(rf.drift_text(drift, scored)))
if replay.drift_summary(drift) is not None:
    display(replay.drift_summary(drift))
""",
    ),
    ("md", "## Dead-instrument flags"),
    (
        "code",
        """
flags = replay.dead_instrument_flags(rates, ceiling)
display(replay.flags_view(flags) if len(flags) else Markdown("No flag raised."))
""",
    ),
    (
        "code",
        "signals = None\nif fleet is not None:\n    signals = rf.fire_rates(scored, ceiling)\n"
        + fleet_view("rf"),
    ),
    (
        "code",
        """
figures = replay.figures(n_sessions, rates, changed, drift, flags)
if fleet is not None:
    figures = fp.with_fleet(figures, signals, **rf.figures_extra(scored))
_ = analyses.write_results(figures)
""",
    ),
    (
        "md",
        """
## What this does not show

- A changed verdict is a difference between two pre-registered formulas, not a finding about a
  session: which formula is right is argued in the rubric, not measured here.
- A flag is a reason to look. A class at 0% may be genuinely rare; a class far above the
  ceiling may reflect a real problem. Both look the same from outside.
- The rubric-v1 replay reads only the active `events.jsonl` (as the v1 engine did); events that
  were rotated into `_archive/` since a session was first scored are invisible to it, so a
  replay can differ from the verdict stored in the journal.
""",
    ),
]

AGREEMENT = [
    (
        "md",
        """
# Agreement study: do raters agree, and is agreement even measurable?

Labels of several raters (label families × targets; long table `item_id, target, family,
rater, label`). Per target: Fleiss κ, Krippendorff α (nominal), Gwet's AC1 and PABAK, each with a
bootstrap 95% interval over items and its n; per category: specific (positive) agreement. A
target whose labels never vary has no defined κ — it is reported as such, never as a number.
κ-paradox diagnostics show where high raw agreement meets low κ (skewed prevalence or rater bias).
""",
    ),
    (
        "params",
        """
labels_path: str = ""  # CSV/JSONL/parquet long table, or run logs of `evalkit judge run` (a file, a folder or a glob); "" simulates the default rater labels
n_items: int = 40  # items per target when simulating
seed: int = 0  # simulation and bootstrap seed
n_resamples: int = 500  # bootstrap resamples over items
""",
    ),
    (
        "code",
        SETUP
        + "from evalkit.analyses import agreement as ag\n"
        + "from evalkit.analyses import label_families as lf\n",
    ),
    (
        "code",
        """
fam = lf.load(labels_path)  # run logs: each judge a label family; else None
labels = fam.table if fam is not None else ag.load_labels(labels_path, n_items=n_items, seed=seed)
display(analyses.show_parameters({"labels_path": labels_path, "n_items": n_items,
                                  "seed": seed, "n_resamples": n_resamples}))
display(ag.describe(labels))
""",
    ),
    ("md", "## Variance-free targets"),
    (
        "code",
        """
vf = ag.variance_free(labels)
display(Markdown(ag.variance_free_text(vf)))
""",
    ),
    ("md", "## Agreement per target\n\n`estimate [95% bootstrap CI], n = items`."),
    (
        "code",
        """
per_target = ag.per_target(labels, n_resamples=n_resamples, seed=seed)
display(ag.format_table(per_target))
display(ag.plot_forest(per_target))
""",
    ),
    ("md", "## Agreement per category"),
    (
        "code",
        """
per_cat = ag.per_category(labels, n_resamples=n_resamples, seed=seed)
display(ag.format_category_table(per_cat))
""",
    ),
    ("md", "## κ paradox diagnostics"),
    (
        "code",
        """
paradox = ag.paradox(labels, n_resamples=n_resamples, seed=seed)
display(Markdown(ag.PARADOX_CAPTION))
display(ag.format_paradox(paradox))
display(Markdown(ag.paradox_text(paradox)))
""",
    ),
    ("md", "## Each judge against gold"),
    (
        "code",
        """
vs_gold = None
if fam is None:
    display(Markdown("The labels are not run logs of model judges, so there is no gold set to "
                     "compare each rater with here (the judge-calibration study does that)."))
else:
    display(Markdown(lf.gold_text(fam)))
    if fam.gold is not None:
        vs_gold = lf.judge_vs_gold(fam, n_resamples=n_resamples, seed=seed)
        display(lf.judge_vs_gold_frame(vs_gold))
""",
    ),
    (
        "code",
        """
_ = analyses.write_results(
    ag.figures(labels, vf, per_target, per_cat, paradox, families=fam, vs_gold=vs_gold)
)
""",
    ),
    (
        "md",
        """
## What this does not show

- Agreement is not accuracy: raters can agree on a wrong label. The latent truth of the
  simulated data is deliberately not read here.
- κ depends on prevalence; compare targets through AC1/PABAK and the paradox table, not κ alone.
- The default labels are simulated (see `docs/DATA_CARD.md`).
- With run logs, each judge is one rater through its majority label: agreement across judges
  says nothing about how consistent each judge is with itself (the judge-calibration study
  shows that).
""",
    ),
]

CALIBRATION = [
    (
        "md",
        """
# Judge calibration: model judges and the rule judge against the frozen gold set

A model judge answers each gold item K times (a run log of `evalkit judge run`, or a labels
file). Shown, beside its agreement with gold, its consistency with itself: Cohen's κ vs gold on
every labelled call and on each item's majority label (ties counted and shown, never broken),
each with a BCa 95% interval that resamples *items* (an item's repeats move together); Fleiss κ
across repeats; the flip rate (items whose repeats disagree, Wilson interval); the calls that
gave no label (cannot-parse, error, never run) with their n; the confusion matrix, per-class
sensitivity and specificity, agreement per decision rule, the pre-registered graduation
decision and every disagreement. The rule judge (`evalkit.judge.apply_rules`) stands beside it
as the deterministic rater.

**Advisory** until a calibration graduates under its pre-registered rule *and* is registered
(`evalkit calibrate --register`): until then every judge figure on this page describes the
judge and licenses none of its verdicts. The line below says where this run stands.
""",
    ),
    (
        "params",
        """
labels_path: str = ""  # run log of `evalkit judge run` or labels file (item_id,label[,repeat][,outcome][,judge]); "" = a simulated model judge (synthetic)
gold_path: str = ""  # gold set directory; "" uses gold/instruction-adherence (its newest version)
repeats: int = 5  # repeats per item of the simulated model judge (default data only)
n_resamples: int = 2000  # bootstrap resamples for the displayed intervals
seed: int = 0  # seed of the simulated model judge and of the displayed bootstrap
""",
    ),
    (
        "code",
        SETUP
        + "from evalkit.analyses import calibration as cal\n"
        + "from evalkit.analyses import judge_consistency as jcv\n",
    ),
    (
        "code",
        """
gold = cal.load_gold(gold_path)
display(analyses.show_parameters(
    {"labels_path": labels_path, "gold_path": gold_path, "repeats": repeats,
     "n_resamples": n_resamples, "seed": seed},
    empty_means={"labels_path": "(default: a simulated model judge, synthetic — see docs/DATA_CARD.md)"},
))
display(Markdown(cal.gold_text(gold)))
data = cal.load_model_judges(labels_path, gold, repeats=repeats, seed=seed)
display(Markdown(data.describe()))
jc = cal.run_all(data, gold, n_resamples=n_resamples, seed=seed)
for s in jc.studies:
    display(Markdown(f"{markdown_code(s.judge)}: " + cal.advisory_text(s)))
""",
    ),
    ("md", "## Judges side by side"),
    (
        "code",
        """
display(jcv.overview_frame(jc))
display(jcv.plot_overview(jc))
""",
    ),
    ("md", "## Consistency over repeats"),
    (
        "code",
        """
for s in jc.model:
    display(Markdown(jcv.consistency_text(s)))
    display(jcv.outcomes_frame(s))
""",
    ),
    ("md", "## Agreement with gold, judge by judge"),
    (
        "code",
        """
for s in jc.studies:
    display(Markdown(f"### {markdown_code(s.judge)}"))
    display(Markdown(cal.summary_text(s)))
    display(cal.confusion_frame(s))
    display(cal.plot_confusion(s))
    display(Markdown(cal.per_class_caption(s)))
    display(cal.per_class_frame(s))
    display(cal.per_rule_frame(s))
""",
    ),
    ("md", "## Graduation decisions (pre-registered)"),
    (
        "code",
        """
for s in jc.studies:
    display(Markdown(f"### {markdown_code(s.judge)}\\n\\n" + cal.decision_text(s)))
""",
    ),
    ("md", "## Disagreements, item by item"),
    (
        "code",
        """
for s in jc.studies:
    display(Markdown(f"### {markdown_code(s.judge)}: {len(s.disagreements)} item(s)"))
    display(cal.disagreements(s))
""",
    ),
    ("code", "_ = analyses.write_results(cal.study_figures(jc))"),
    (
        "md",
        """
## What this does not show

- Agreement with a gold set measures a judge against the gold labellers' reading, not against
  ground truth about the sessions.
- With the default data the model judge is simulated (synthetic): its figures describe the
  simulator's known confusion, difficulty and parse failures, not any real model.
- A judge's consistency over K repeats at one temperature says nothing about another
  temperature, prompt or model version; a changed judge is a new calibration.
- The rule judge is deterministic: its disagreements point at rules or gold items to revisit,
  not at noise.
""",
    ),
]

NOTEBOOKS = {
    "threshold-study": THRESHOLD,
    "rubric-replay": REPLAY,
    "agreement-study": AGREEMENT,
    "judge-calibration": CALIBRATION,
}


# ------------------------------------------------------------------ prevalence-study (issue 12)

PREVALENCE = [
    (
        "md",
        """
# Prevalence study: what share of the target really is each class?

A judge labelled every item of a target that has no gold labels. Its own label shares (the
**naive** shares) are biased by its errors. This page puts three estimates of each class
share side by side, each with its 95% interval and its n: the naive share, the share
**corrected** for the judge's error rates measured on the gold set
(`evalkit.stats.corrected_prevalence`), and — where humans labelled a random subsample of the
target — the **PPI++** share (`evalkit.stats.ppi_prevalence`) beside the human-only share.
What each estimate assumes is said in plain words below; every undefined figure is explained.

With the default parameters the data are **synthetic** (see `docs/DATA_CARD.md`): a simulated
model judge over the gold set `gold/instruction-adherence/v2` and over a simulated target whose
true class shares are known, so the page shows the truth beside the estimates.
""",
    ),
    (
        "params",
        """
target_labels_path: str = ""  # the judge's labels on the target: CSV item_id,label or item_id,judge,repeat,label,outcome; "" = the synthetic default data
gold_labels_path: str = ""  # the same judge's labels on the gold items (same layouts); "" = the simulated judge (with the default target)
gold_path: str = ""  # gold set version folder; "" = gold/instruction-adherence/v2
human_labels_path: str = ""  # human labels (item_id,label) on a random subsample of the target; "" = simulated with the default data, none otherwise
judge: str = ""  # the judge to read from label files in the long layout that hold several; "" = the only one
level: float = 0.95  # confidence level of every interval
n_resamples: int = 2000  # two-sample bootstrap resamples of the corrected shares
seed: int = 20261201  # seed of the default data and of the bootstrap
n_target: int = 2000  # default data: items of the simulated target
true_shares: dict = {"pass": 0.5, "fail": 0.2, "cannot-determine": 0.3}  # default data: the known true class shares of the simulated target
repeats: int = 5  # default data: judge calls per item; an item's label is its majority label
n_human: int = 200  # default data: target items with a simulated human label (the true class); 0 = no PPI++
""",
    ),
    ("code", SETUP + "from evalkit.analyses import prevalence as prev, prevalence_page as page\n"),
    (
        "code",
        """
display(analyses.show_parameters({"target_labels_path": target_labels_path,
        "gold_labels_path": gold_labels_path, "gold_path": gold_path,
        "human_labels_path": human_labels_path, "judge": judge, "level": level,
        "n_resamples": n_resamples,
        "seed": seed, "n_target": n_target, "true_shares": true_shares, "repeats": repeats,
        "n_human": n_human}, empty_means=prev.EMPTY_MEANS))
data = prev.load_data(target_labels_path, gold_labels_path, gold_path, human_labels_path,
                      n_target=n_target, true_shares=true_shares, repeats=repeats,
                      n_human=n_human, seed=seed, judge=judge or None)
display(Markdown(page.data_text(data)))
""",
    ),
    ("md", "## The estimates side by side\n\n`share [95% CI]`; n is in each column's heading."),
    (
        "code",
        """
est = prev.estimate(data, level=level, n_resamples=n_resamples, seed=seed)
display(page.plot_estimates(est, data))
display(page.estimates_frame(est, data))
display(Markdown(page.truth_text(est, data)))
""",
    ),
    ("md", "## What the estimates assume"),
    ("code", "display(Markdown(page.assumption_text(est, data)))"),
    (
        "md",
        """
## The judge's error rates on the gold set

What the correction assumes to hold on the target: for each gold label (row), how often the
judge gave each label, or none (columns); each row sums to 100%.
""",
    ),
    ("code", "display(page.confusion_frame(est))"),
    ("md", "## Undefined figures and notes"),
    ("code", "display(Markdown(page.undefined_text(est)))"),
    ("code", "_ = analyses.write_results(prev.figures(est, data))"),
    (
        "md",
        """
## What this does not show

- The corrected share is only as good as its assumption: a judge that errs differently on the
  target than on the gold set biases it, and nothing on this page can detect that. PPI++ does
  not need the assumption, but needs a random human-labelled subsample.
- Each interval covers its own share; the page shows many and makes no multiple-comparison
  correction. One run that covers the truth is not a coverage study.
- The default data are synthetic (see the data card): they show how the estimators behave on
  a judge whose errors are known, not how any real judge behaves.
""",
    ),
]

NOTEBOOKS["prevalence-study"] = PREVALENCE


# ------------------------------------------------------------------------ monitor (issue 22)

MONITOR = [
    (
        "md",
        """
# Monitor: every check's fire rate as an anytime-valid band

A rubric author reads a check's fire rate again and again as sessions arrive (HR-101: a check
far above ~10% is a broken instrument; HR-105: one that never fires is dead or silent). A
fixed-n interval read after every session is no 95% interval any more. This page reads the
journal in session order and gives every check (each dimension × status, each fact flag, the
rule judge and its rules) a **confidence sequence**: a band that may be read after every
session, with the state it reached (`broken`, `quiet`, `within`, `undecided`) and the session
at which it first did. Unmeasured sessions are counted apart, never as a zero. The fixed-n
Wilson interval is drawn beside each band for comparison.

With the default parameters the data are the synthetic preset `rubric-v2-2026-09-19`
(see `docs/DATA_CARD.md`), built to reproduce the rubric-v1 measurement rubric-v2 reports.
""",
    ),
    (
        "params",
        """
metrics_dir: str = ""  # metrics directory holding eval.jsonl (or a ledger, scored in memory); "" builds the preset into a temp dir
rubric: str = ""  # one rubric version; "" = every version in the journal
ceiling: float = 0.1  # broken above this rate (HR-101, ~10%)
floor: float = 0.01  # quiet below this rate (HR-105); 0 turns quiet off
alpha: float = 0.05  # the band misses the true rate at some session with probability <= alpha
optimize_at: float = 100.0  # sessions the band is tightest around
""",
    ),
    ("code", SETUP + "from evalkit.analyses import monitor as mon, monitor_page as mp\n"),
    (
        "code",
        """
data_dir = analyses.default_metrics_dir(metrics_dir)
display(analyses.show_parameters({"metrics_dir": metrics_dir, "rubric": rubric,
        "ceiling": ceiling, "floor": floor, "alpha": alpha, "optimize_at": optimize_at}))
limits = mon.Limits(ceiling=ceiling, floor=floor, alpha=alpha, optimize_at=optimize_at)
report = mon.monitor(data_dir, rubric=rubric or None, limits=limits)
display(Markdown(mp.data_text(report)))
""",
    ),
    ("md", "## States\n\nThe alarm checks that are broken or quiet, and when they became so."),
    ("code", "display(Markdown(mp.states_text(report)))"),
    (
        "md",
        """
## Bands against session index

The alarm checks that reached a state or fired at least once: the anytime-valid band (shaded),
the running rate, the fixed-n Wilson interval (dashed, valid only had n been fixed in advance),
the ceiling and the floor; the dotted line marks the session at which the state was reached.
""",
    ),
    ("code", "display(mp.plot_bands(report))"),
    ("md", "## Every check\n\nShares (a pass or not-applicable rate) are reported, never alarms."),
    ("code", "display(mp.states_frame(report))"),
    ("md", "## The price"),
    ("code", "display(Markdown(mp.price_text(report)))"),
    ("code", "_ = analyses.write_results(mp.figures(report))"),
    ("md", "## What the states do not prove"),
    ("code", "display(Markdown(mp.DOES_NOT_PROVE))"),
]

NOTEBOOKS["monitor"] = MONITOR


def main() -> None:
    for name, cells in NOTEBOOKS.items():
        nb = _nb(name, cells)
        nbformat.validate(nb)
        nbformat.write(nb, str(HERE / f"{name}.ipynb"))


if __name__ == "__main__":
    main()
