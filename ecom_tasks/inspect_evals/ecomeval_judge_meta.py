"""EcomEval's judge meta-eval in Inspect: the ``grader`` role (or a panel) grades a gold set of fixed
responses whose grades are known, exactly as ``ecomeval_judge`` grades a model's responses; no
evaluated model is called (``--model none``). Details: ``ecom_tasks/ecomeval/README.md``."""

from __future__ import annotations

from dataclasses import asdict

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import HeadlineMetric
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, Value, metric, scorer
from inspect_ai.solver import TaskState

from ecom_tasks.ecomeval.judging import JudgeSettings
from ecom_tasks.ecomeval.metrics import judge_agreement
from ecom_tasks.ecomeval.prompts import GRADER_VERSION
from ecom_tasks.ecomeval.schema import FIXTURES_LOCATION, load_judge_cases
from ecom_tasks.inspect_evals.ecomeval import GRADERS, VERSION, ecomeval_judge, judge_record, outcomes_of
from ecom_tasks.provenance import task_metadata
from ecom_tasks.scorers.inspect_judge import gold_response, require_grader
from ecom_tasks.scorers.inspect_scorers import outcome_mean
from ecom_tasks.scorers.judge import GRADER_MAX_TOKENS
from ecom_tasks.scorers.panel import MEDIAN
from ecom_tasks.scorers.settings import check_settings


@metric
def judge_meta_metrics() -> Metric:
    """``metrics.judge_agreement`` (keys: the README's "Metrics"); each case's expected grade and kind are its
    sample metadata."""

    def compute(scores: list[SampleScore]) -> Value:
        scored = [s for s in scores if isinstance(s.score.value, dict)]
        cases = [s.sample_metadata or {} for s in scored]
        expected = [int(case["expected_grade"]) for case in cases]
        return judge_agreement(outcomes_of(scored), expected, [case["kind"] == "adversarial" for case in cases])

    return compute


@scorer(metrics=[judge_meta_metrics()])
def ecomeval_judge_meta_scorer(
    cache: bool | str = True,
    grader_max_tokens: int | str = GRADER_MAX_TOKENS,
    graders: str | list[str] | None = None,
    panel: str = MEDIAN,
) -> Scorer:
    """Grade a gold case (the fixed response :func:`gold_response` made the output) with ``ecomeval_judge``:
    the same graders, settings and checks; the answer is the grade (else the judge's status)."""
    judge = ecomeval_judge(cache=cache, grader_max_tokens=grader_max_tokens, graders=graders, panel=panel)

    async def score(state: TaskState, target: Target) -> Score:
        graded = await judge(state, target)
        assert graded is not None  # ecomeval_judge scores every sample
        judged = dict(graded.metadata or {})
        answer = judged["status"] if judged["grade"] is None else str(judged["grade"])
        metadata = {"expected_grade": int(state.metadata["expected_grade"]), **judged}
        return Score(value=graded.value, answer=answer, explanation=graded.explanation, metadata=metadata)

    return score


@task
def ecomeval_judge_meta(
    data: str | None = None,
    cache: bool | str = True,
    grader_max_tokens: int = GRADER_MAX_TOKENS,
    graders: str | None = None,
    panel: str = MEDIAN,
) -> Task:
    """Check the ``grader`` role (or a panel) on the gold set (App. D verdicts, adversarial responses, controls:
    the README's "Metrics"). Run with ``--model none``: only graders are called."""
    check_settings({"data": data, "graders": graders, "panel": panel})
    settings = JudgeSettings.from_options(grader_max_tokens, panel)
    location = f"{FIXTURES_LOCATION}/judge_meta"
    samples = [
        Sample(
            id=c.id, input=c.question, target=c.reference, metadata={k: v for k, v in asdict(c).items() if k != "id"}
        )
        for c in load_judge_cases(data)
    ]
    return Task(
        dataset=MemoryDataset(samples, name="ecomeval_judge_meta", location=str(data or location)),
        setup=require_grader(graders, **GRADERS),
        solver=gold_response(),
        scorer=ecomeval_judge_meta_scorer(
            cache=cache, grader_max_tokens=settings.max_tokens, graders=graders, panel=settings.method
        ),
        version=VERSION,
        epochs=Epochs(1, outcome_mean()),
        headline_metric=HeadlineMetric(metric="agreement"),
        metadata={
            # The "model" evaluated here is the grader: its prompt is the one that counts.
            **task_metadata(
                "ecomeval", task_version=VERSION, prompt_version=GRADER_VERSION, data=data, fixtures=location
            ),
            **judge_record(settings, cache, graders, with_threshold=False),
        },
    )
