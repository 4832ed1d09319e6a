"""``benchmarks/campaign.py``: the campaign's arithmetic against hand arithmetic, MonBench full first
(2,611 test questions x 72 runs, the paper's Table 1 sizes)."""

from __future__ import annotations

import importlib.util
import math
import statistics
import sys

import pytest
from helpers import REPO_DIR

spec = importlib.util.spec_from_file_location("campaign", REPO_DIR / "benchmarks" / "campaign.py")
campaign = importlib.util.module_from_spec(spec)
sys.modules["campaign"] = campaign  # dataclasses look their module up
spec.loader.exec_module(campaign)


def test_monbench_full_is_2611_questions_times_72_runs_per_model():
    plan = campaign.measure("monbench_perm")
    assert sorted((k.name, k.items, k.calls_per_item) for k in plan.kinds) == sorted(
        [
            ("model:query_ad_relevance", 397, 72),
            ("model:product_co_purchase", 336, 72),
            ("model:query_query_intent", 535, 72),
            ("model:query_product_relation", 1343, 72),
        ]
    )
    settings = campaign.Settings(models=20)
    row = campaign.plan_row(plan, settings)
    assert row.calls == 187_992  # 2,611 x 72
    assert campaign.campaign_totals([row], settings)["calls"] == 3_759_840  # the "about 3.8 M" for 20 models
    assert campaign.plan_row(campaign.measure("monbench_cyclic"), settings).calls == 31_332  # 2,611 x 12


def test_monbench_prompt_tokens_are_the_fixture_means_scaled_to_table_1():
    """Each task's mean prompt length on the fixtures (counted here, with the same tokenizer), times
    its Table 1 test size, times 72."""
    from ecom_tasks.monbench.protocol import load_items

    encode = campaign._encoder().encode
    expected = 0.0
    for task, size in {
        "query_ad_relevance": 397,
        "product_co_purchase": 336,
        "query_query_intent": 535,
        "query_product_relation": 1343,
    }.items():
        items = load_items(None, tasks=(task,), split="test", design="full")
        assert len(items) % 72 == 0
        mean = statistics.fmean(len(encode(i.system_prompt + "\n" + i.user_prompt)) for i in items)
        expected += size * 72 * mean
    settings = campaign.Settings(prefill_tps=1000.0, decode_tps=100.0)
    row = campaign.plan_row(campaign.measure("monbench_perm", encode), settings)
    assert row.prompt_tokens == pytest.approx(expected)
    assert row.output_tokens == 187_992 * campaign.OUTPUT_TOKENS["monbench"]
    assert row.server_s == pytest.approx(expected / 1000.0 + 187_992 * 12 / 100.0)
    assert row.prefill_cached < row.prompt_tokens


def test_hand_built_monbench_full_plan():
    """One kind per task with round numbers: every figure by hand."""
    kinds = [
        campaign.CallKind(
            "model:a", 397, 72, prompt_tokens=100, images=0, unique_tokens=2000, shared_tokens=300, output_tokens=10
        ),
        campaign.CallKind(
            "model:b", 2214, 72, prompt_tokens=200, images=0, unique_tokens=4000, shared_tokens=500, output_tokens=10
        ),
    ]
    settings = campaign.Settings(
        models=20, parallel=4, prefill_tps=10_000, decode_tps=2_000, reasoning_tokens=90, harness_cps=70
    )
    row = campaign.plan_row(campaign.TaskPlan("monbench_perm", kinds), settings)
    calls = 397 * 72 + 2214 * 72
    assert row.calls == calls == 187_992
    prompt = 397 * 72 * 100 + 2214 * 72 * 200  # 2,858,400 + 31,881,600
    assert row.prompt_tokens == prompt == 34_740_000
    cached = 397 * 2000 + 300 + 2214 * 4000 + 500  # each item's own tokens once, the shared ones once
    assert row.prefill_cached == cached == 9_650_800
    output = calls * (10 + 90)
    assert row.output_tokens == output == 18_799_200
    assert row.server_s == pytest.approx(prompt / 10_000 + output / 2_000)  # 3,474 + 9,399.6 s
    assert row.server_cached_s == pytest.approx(cached / 10_000 + output / 2_000)
    assert row.harness_s == pytest.approx(calls / 70)  # 2,685.6 s: below the server here
    totals = campaign.campaign_totals([row], settings)
    assert totals["calls"] == 20 * calls
    assert totals["wall_s"] == pytest.approx(math.ceil(20 / 4) * (prompt / 10_000 + output / 2_000))
    # A fast server: the harness becomes the floor, shared by the models of a wave in one Inspect process.
    quick = campaign.Settings(models=20, parallel=4, prefill_tps=1e9, decode_tps=1e9, harness_cps=70)
    fast = campaign.plan_row(campaign.TaskPlan("monbench_perm", kinds), quick)
    assert fast.wall_s == pytest.approx(calls / 70)
    assert campaign.campaign_totals([fast], quick)["wall_s"] == pytest.approx(5 * 4 * calls / 70, rel=1e-6)
    quick.harness_processes = 4  # one eval-set process per model of a wave
    assert campaign.campaign_totals([fast], quick)["wall_s"] == pytest.approx(5 * calls / 70, rel=1e-6)


def test_prefix_trie_counts_by_hand():
    assert campaign.trie_nodes([[1, 2, 3], [1, 2, 4], [5]]) == 5  # 1-2-3, then 4, then 5
    assert campaign.trie_nodes([[1, 2], [1, 2]]) == 2  # the same prompt twice is computed once
    # Two items sharing the prefix [9, 9]; item 0 has prompts [9,9,1],[9,9,1,2], item 1 has [9,9,3].
    unique, shared = campaign.prefix_profile([[[9, 9, 1], [9, 9, 1, 2]], [[9, 9, 3]]])
    assert (unique, shared) == (statistics.fmean([2, 1]), 2.0)


def test_rmir_embedding_work_by_hand():
    settings = campaign.Settings(models=20, embedders=2, embed_rate=50)
    work = campaign.rmir_embedding(settings, with_reason=True, with_embed=True)
    assert work["pool_images"] == 2 * 35_803  # once per embedder, then cached
    assert work["pool_s"] == pytest.approx(2 * 35_803 / 50)
    assert work["query_embeddings"] == 2 * (20 + 1) * 1_634  # rmir_reason per model, rmir once, per embedder
