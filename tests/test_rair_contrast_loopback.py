"""A served model that contrasts levels scores what its replies assert, in both frameworks.

The scripted model behind the loopback OpenAI-compatible server answers every
RAIR prompt the way instruct models do: it names the level it chooses and the
one it rejects ("L3 rather than L4", "It can't be L4", "It would be L4 only
if ..."), and sometimes hedges ("L1 or L3"). Through Inspect's ``openai-api``
provider and lm-eval's ``local-chat-completions`` the metrics must be exactly
what scikit-learn computes from the asserted levels, hedges being invalid
predictions: wrong for every metric, a recall miss of their gold level in
Macro-F1 (not a class of their own), and counted in ``invalid_rate``.

The same run reports the strict reading beside it (``acc2_strict`` ...): only a
reply that is exactly the requested output (``L3``, after any reasoning) counts;
a bare ``L2`` (the prompt asks for ``[L2-<attribute> Mismatch]``) and every
sentence are invalid there. Its figures are scikit-learn's too, from the
replies that are exactly a level.
"""

from __future__ import annotations

import re
import zlib

import lm_eval
import lm_eval.models  # noqa: F401  (lm-eval's own models: registering ours first skips its lazy import)
import pytest
from helpers import policy_from_rule
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model
from loopback.openai_server import serve_openai_compatible
from sklearn.metrics import accuracy_score, f1_score

from ecom_tasks.inspect_evals.rair import rair_general, rair_hard
from ecom_tasks.lm_eval_tasks import task_manager
from ecom_tasks.rair.protocol import build_items
from ecom_tasks.rair.rules import load_rules
from ecom_tasks.rair.schema import LEVELS, load_records
from ecom_tasks.rair.variants import TASK_VERSION

SUBSETS = ("general", "hard")
HEDGE = "invalid"

#: (reply template, whether the reply asserts {level}); {other} is a level the reply rejects or hedges with.
TEMPLATES = (
    ("{level} rather than {other}", True),
    ("I'd rate this {level}. It can't be {other} because the colour is off.", True),
    ("{level}. Not {other}, since the category is related.", True),
    ("{level}\nIt would be {other} only if it were burgundy.", True),
    ("<think>Is it {other}? The details decide.</think>\nFinal answer: {level}, not {other}.", True),
    ("是{level}而不是{other}。", True),
    ("{other} would need every attribute to match; the item is {level}.", True),
    ("{level}", True),
    ("<think>Is it {other}? No.</think>\n{level}", True),
    ("{level} or {other}", False),
    ("Either {level} or {other}, hard to say.", False),
)


def _items():
    return {subset: build_items(load_records(subset=subset), rules=load_rules("none")) for subset in SUBSETS}


def scripted(user_prompt: str, gold: str) -> tuple[str, str]:
    """The reply to one prompt and the level it asserts (``invalid`` for a hedge).

    Deterministic in the prompt: a third of the answers miss the gold level, the template cycles."""
    digest = zlib.crc32(user_prompt.encode("utf-8"))
    index = LEVELS.index(gold)
    level = gold if digest % 3 else LEVELS[(index + 1 + digest % 3) % 4]
    other = LEVELS[(LEVELS.index(level) + 1 + (digest >> 4) % 3) % 4]
    template, asserts = TEMPLATES[(digest >> 8) % len(TEMPLATES)]
    return template.format(level=level, other=other), level if asserts else HEDGE


#: The templates that are exactly the requested output after the reasoning (the strict reading's).
EXACT_TEMPLATES = {"{level}", "<think>Is it {other}? No.</think>\n{level}"}


def strict_level(user_prompt: str, gold: str) -> str:
    """The level the strict reading takes from the reply: the level of an exact-output reply, except a
    bare L2 (the prompt asks for the mismatch form); otherwise invalid."""
    digest = zlib.crc32(user_prompt.encode("utf-8"))
    template, _ = TEMPLATES[(digest >> 8) % len(TEMPLATES)]
    level = scripted(user_prompt, gold)[1]
    return level if template in EXACT_TEMPLATES and level != "L2" else HEDGE


def expected(items) -> dict[str, float]:
    """Both readings' figures: the careful one's from the levels the replies assert, the strict one's
    (``*_strict``) from the levels exact-output replies give."""
    careful = _figures(items, lambda item: scripted(item.user_prompt, item.target)[1])
    strict = _figures(items, lambda item: strict_level(item.user_prompt, item.target))
    del strict["n"]
    return {**careful, **{f"{key}_strict": value for key, value in strict.items()}}


def _figures(items, predict) -> dict[str, float]:
    """Acc@2, Acc@4 and Macro-F1 (over L1-L4) by scikit-learn, invalid rate and count."""
    gold = [item.target for item in items]
    pred = [predict(item) for item in items]

    def side(label: str) -> str:
        return HEDGE if label == HEDGE else "relevant" if label in ("L3", "L4") else "irrelevant"

    return {
        "acc4": accuracy_score(gold, pred),
        "acc2": accuracy_score([side(g) for g in gold], [side(p) for p in pred]),
        "macro_f1": f1_score(gold, pred, labels=list(LEVELS), average="macro", zero_division=0),
        "invalid_rate": pred.count(HEDGE) / len(pred),
        "n": float(len(pred)),
    }


@pytest.fixture(scope="module")
def served():
    """The loopback server answering with the scripted model; prompts are unique per subset."""
    items = _items()
    gold_by_prompt = {item.user_prompt: item.target for subset in SUBSETS for item in items[subset]}
    assert len(gold_by_prompt) == sum(len(v) for v in items.values())
    with serve_openai_compatible(
        policy_from_rule(lambda system, user: scripted(user, gold_by_prompt[user])[0])
    ) as server:
        yield server, items


def test_the_script_contrasts_levels_and_hedges(served):
    _, items = served
    replies = [scripted(item.user_prompt, item.target) for subset in SUBSETS for item in items[subset]]
    assert {template for template, _ in TEMPLATES} <= {
        template for template, _ in TEMPLATES for reply, _ in replies if _matches(template, reply)
    }
    # the rejected level comes last in most replies: a "last level named" reading scores them wrong
    last_named = [re.findall(r"L[1-4]", reply)[-1] for reply, level in replies if level != HEDGE]
    asserted = [level for _, level in replies if level != HEDGE]
    assert sum(a != b for a, b in zip(last_named, asserted)) > len(asserted) / 3
    assert 0 < sum(level == HEDGE for _, level in replies) < len(replies) / 2
    for subset in SUBSETS:
        figures = expected(items[subset])
        assert 0 < figures["macro_f1"] < 1 and 0 < figures["acc4"] < 1
        # the strict reading is a different figure, and not a trivial one
        assert 0 < figures["acc4_strict"] < figures["acc4"] and figures["invalid_rate_strict"] > figures["invalid_rate"]
        assert 0 < figures["macro_f1_strict"] < figures["macro_f1"]


def _matches(template: str, reply: str) -> bool:
    pattern = re.escape(template).replace(r"\{level\}", "L[1-4]").replace(r"\{other\}", "L[1-4]")
    return re.fullmatch(pattern, reply, re.S) is not None


def _assert_figures(actual: dict[str, float], figures: dict[str, float], where: str) -> None:
    for key, value in figures.items():
        assert actual[key] == pytest.approx(value, abs=1e-12), f"{where}: {key}"


def test_inspect_openai_api_scores_the_asserted_levels(served, tmp_path):
    server, items = served
    # not memoized: Inspect caches models by name and explicit base URL, and this server stops after the module
    model = get_model("openai-api/vllm/test-model", base_url=server.base_url, api_key="test-key", memoize=False)
    logs = inspect_eval([rair_general(), rair_hard()], model=model, log_dir=str(tmp_path), display="none")
    for subset, log in zip(SUBSETS, logs):
        assert log.status == "success", log.error
        assert log.eval.task_version == TASK_VERSION
        metrics = {name: m.value for score in log.results.scores for name, m in score.metrics.items()}
        _assert_figures(metrics, expected(items[subset]), f"inspect rair_{subset}")
        # every hedge is shown as the invalid status 'ambiguous'
        statuses = [s.scores["rair_scorer"].metadata["status"] for s in log.samples]
        hedges = sum(scripted(s.input[1].text, s.target)[1] == HEDGE for s in log.samples)
        assert statuses.count("ambiguous") == hedges > 0 and set(statuses) == {"ok", "ambiguous"}


def test_lm_eval_local_chat_completions_scores_the_asserted_levels(served):
    server, items = served
    results = lm_eval.simple_evaluate(
        model="local-chat-completions",
        model_args=f"model=test-model,base_url={server.chat_completions_url}",
        tasks=[f"rair_{subset}" for subset in SUBSETS],
        apply_chat_template=True,
        task_manager=task_manager(include_defaults=False),
        bootstrap_iters=0,
    )
    for subset in SUBSETS:
        assert results["versions"][f"rair_{subset}"] == float(TASK_VERSION)
        row = {key.split(",")[0]: value for key, value in results["results"][f"rair_{subset}"].items() if "," in key}
        _assert_figures(row, expected(items[subset]), f"lm-eval rair_{subset}")
