"""The openai_embeddings embedder over real HTTP against the loopback /v1/embeddings server (vLLM's
text ``input`` form and its multimodal ``messages`` form)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from helpers import check_ok, run_cli
from inspect_ai.log import list_eval_logs, read_eval_log
from loopback.embeddings_server import EmbeddingInput, RejectRequest, parse_inputs, serve_embeddings
from loopback.server import JsonHandler, LoopbackServer

from ecom_tasks.rmir.embedders import EmbeddingRequestError, EmbedInput, OpenAIEmbeddings
from ecom_tasks.rmir.schema import CATEGORIES, load_data

DIM = 16
DATA = load_data()


def vector(text: str, images: tuple[bytes, ...]) -> list[float]:
    """What the served 'model' returns: a fixed pseudo-random vector per (text, images)."""
    digest = hashlib.sha256(text.encode() + b"".join(images)).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little")).normal(size=DIM).tolist()


def policy(item: EmbeddingInput) -> list[float]:
    return vector(item.text, item.images)


def unit(rows) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float64)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def hand_computed() -> dict[str, float]:
    """recall@20/50 from the server's vectors: cosine, full stable sort, positives in the top K / positives."""
    pool = unit([vector("", (Path(p.image).read_bytes(),)) for p in DATA.pool])  # pool images alone
    ids = [p.id for p in DATA.pool]
    per_query = {}
    for q in DATA.queries:
        query = unit([vector(q.query_text, (Path(q.query_image).read_bytes(),))])[0]
        ranked = [ids[i] for i in np.argsort(-(pool @ query), kind="stable")]
        per_query[q.id] = {k: len(set(ranked[:k]) & set(q.positives)) / len(q.positives) for k in (20, 50)}
    out = {f"recall@{k}": float(np.mean([v[k] for v in per_query.values()])) for k in (20, 50)}
    for c in CATEGORIES:
        out[f"{c}/recall@20"] = float(np.mean([per_query[q.id][20] for q in DATA.queries if q.category == c]))
    return out


def run_task(tmp_path: Path, server, name: str) -> dict[str, float]:
    args = json.dumps({"base_url": server.base_url, "model": "vlm2vec-test", "api_key_env": "EMB_KEY", "batch_size": 4})
    logs = tmp_path / name
    check_ok(
        run_cli(
            [
                "inspect",
                "eval",
                "ecom_tasks/rmir",
                "-T",
                "retriever=openai_embeddings",
                "-T",
                f"retriever_args={args}",
                "--model",
                "none",
                "--log-dir",
                logs,
                "--display",
                "none",
            ],
            env={"ECOM_TASKS_CACHE": str(tmp_path / "cache"), "EMB_KEY": "secret"},
            cwd=tmp_path,
        )
    )
    (info,) = list_eval_logs(str(logs))
    log = read_eval_log(info)
    assert log.status == "success", log.error
    return {k: m.value for s in log.results.scores for k, m in s.metrics.items()}


def test_pool_images_sent_as_image_parts_recall_by_hand_and_second_run_sends_only_queries(tmp_path):
    with serve_embeddings(policy) as server:
        first = run_task(tmp_path, server, "first")
        requests = list(server.requests)
        assert set(server.authorizations) == {"Bearer secret"}
        server.requests.clear()
        second = run_task(tmp_path, server, "second")
        again = list(server.requests)
    # First run: one multimodal request per pool item (26) and per query (13).
    assert len(requests) == 39 and all("messages" in body and body["model"] == "vlm2vec-test" for body in requests)
    sent_images = []
    kinds = []
    for body in requests:
        (message,) = body["messages"]
        kinds.append([part["type"] for part in message["content"]])
        sent_images.append(message["content"][0]["image_url"]["url"])
    # Pool items go as their image alone (no caption); queries as image and text.
    assert sorted(map(tuple, kinds)) == [("image_url",)] * 26 + [("image_url", "text")] * 13
    pool_bytes = {Path(p.image).read_bytes() for p in DATA.pool}
    import base64

    decoded = {base64.b64decode(url.split(",", 1)[1]) for url in sent_images}
    assert pool_bytes <= decoded
    expected = hand_computed()
    for key, value in expected.items():
        assert first[key] == pytest.approx(value, abs=1e-9), key
    assert 0 < first["recall@20"] < 1
    # Second run: the pool comes from the cache; only the 13 query embeddings are requested.
    assert len(again) == 13
    query_texts = {q.query_text for q in DATA.queries}
    assert {body["messages"][0]["content"][1]["text"] for body in again} == query_texts
    assert second == first


def test_text_inputs_are_batched_in_the_input_field_and_retried():
    failed = []

    def flaky(item: EmbeddingInput) -> list[float]:
        # The batch holding "a" fails once (batches run concurrently: pick one, not the first to arrive).
        if item.text == "a" and not failed:
            failed.append(item.text)
            raise RejectRequest(503, "warming up")
        return vector(item.text, ())

    with serve_embeddings(flaky) as server:
        embedder = OpenAIEmbeddings(base_url=server.base_url, model="m", batch_size=2, max_retries=2)
        rows = embedder.embed([EmbedInput(text=t) for t in "abcde"], "query")
        bodies = list(server.requests)
    np.testing.assert_allclose(rows, [vector(t, ()) for t in "abcde"], rtol=1e-6)
    sizes = sorted(len(b["input"]) for b in bodies)
    assert sizes == [1, 2, 2, 2]  # three batches, one of them retried after the 503
    assert all(b["encoding_format"] == "float" for b in bodies)


def test_a_client_error_fails_at_once_with_the_servers_message():
    def reject(item: EmbeddingInput) -> list[float]:
        raise RejectRequest(400, "model does not support images")

    with serve_embeddings(reject) as server:
        embedder = OpenAIEmbeddings(base_url=server.base_url, model="m", max_retries=3)
        with pytest.raises(EmbeddingRequestError, match="answered 400: .*model does not support images"):
            embedder.embed([EmbedInput(text="x")], "pool")
        assert len(server.requests) == 1


# --- issue 16 acceptance: what is embedded, which queries count, which metrics -----------------


def split_folder(tmp_path: Path, train: set[str]) -> Path:
    """The fixtures with a ``split`` column on the queries: ``train`` ids are training queries."""
    import shutil

    from ecom_tasks.data import fixtures_dir

    folder = tmp_path / "rmir_split"
    shutil.copytree(fixtures_dir("rmir"), folder, ignore=shutil.ignore_patterns("*.py"))
    lines = (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    for row in rows:
        row["split"] = "train" if row["id"] in train else "test"
    (folder / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


def run_cli_task(tmp_path: Path, name: str, args: dict, *task_args: str, expect: int = 0):
    logs = tmp_path / name
    proc = run_cli(
        [
            "inspect",
            "eval",
            "ecom_tasks/rmir",
            "-T",
            "retriever=openai_embeddings",
            "-T",
            f"retriever_args={json.dumps(args)}",
            *[a for t in task_args for a in ("-T", t)],
            "--model",
            "none",
            "--log-dir",
            logs,
            "--display",
            "none",
        ],
        env={"ECOM_TASKS_CACHE": str(tmp_path / "cache")},
        cwd=tmp_path,
    )
    check_ok(proc, expect)
    if expect:
        return proc
    (info,) = list_eval_logs(str(logs))
    log = read_eval_log(info)
    assert log.status == "success", log.error
    return log


def run_here(tmp_path: Path, name: str, args: dict, **task_args):
    """The same run in this process (faster than the CLI): ``inspect_ai.eval`` of the ``rmir`` task."""
    from inspect_ai import eval as inspect_eval

    from ecom_tasks.inspect_evals.rmir import rmir

    (log,) = inspect_eval(
        rmir(retriever="openai_embeddings", retriever_args=args, **task_args),
        model="none",
        log_dir=str(tmp_path / name),
        display="none",
    )
    assert log.status == "success", log.error
    return log


def by_hand(queries, ks: tuple[int, ...]) -> dict[str, float]:
    """recall@K and MRR (first positive within the top 100) over ``queries``, pool images alone."""
    pool = unit([vector("", (Path(p.image).read_bytes(),)) for p in DATA.pool])
    ids = [p.id for p in DATA.pool]
    rows = []
    for q in queries:
        query = unit([vector(q.query_text, (Path(q.query_image).read_bytes(),))])[0]
        ranked = [ids[i] for i in np.argsort(-(pool @ query), kind="stable")]
        ranks = [ranked.index(p) + 1 for p in q.positives]
        row = {f"recall@{k}": sum(r <= k for r in ranks) / len(ranks) for k in ks}
        row["mrr"] = 1 / min(ranks) if min(ranks) <= 100 else 0.0
        rows.append(row)
    return {key: float(np.mean([r[key] for r in rows])) for key in rows[0]}


@pytest.mark.slow
def test_acceptance_pool_images_alone_split_selects_and_k_with_metrics_is_the_union(tmp_path):
    train = {"func_tire", "temp_tadpole", "caus_laundry", "caus_pizza"}
    folder = split_folder(tmp_path, train)
    args = {"base_url": "", "model": "vlm2vec-test", "batch_size": 4}
    pool_bytes = {Path(p.image).read_bytes() for p in DATA.pool}
    with serve_embeddings(policy) as server:
        args["base_url"] = server.base_url
        log = run_cli_task(
            tmp_path, "train", args, f"data={folder}", "split=train", "k=10,20,50", "metrics=recall@20,mrr"
        )
        requests = list(server.requests)
        server.requests.clear()
        default = run_cli_task(tmp_path, "default", args, f"data={folder}")
        default_requests = list(server.requests)
    inputs = [item for body in requests for item in parse_inputs(body)]
    pool_requests = [item for item in inputs if item.images and item.images[0] in pool_bytes]
    query_requests = [item for item in inputs if item not in pool_requests]
    # No pool request carries text by default: each is one image alone.
    assert len(pool_requests) == 26 and all(item.text == "" and len(item.images) == 1 for item in pool_requests)
    # split=train: exactly the four training queries were embedded and scored.
    train_queries = [q for q in DATA.queries if q.id in train]
    assert sorted(item.text for item in query_requests) == sorted(q.query_text for q in train_queries)
    assert {s.id for s in log.samples} == train and log.eval.metadata["split"] == "train"
    assert log.eval.metadata["pool_input"] == "image" and log.eval.metadata["pool_captions"] is False
    # k adds the cut-offs, metrics selects among the rest: the union, nothing dropped.
    metrics = {k: m.value for s in log.results.scores for k, m in s.metrics.items()}
    # (Besides the run's counts: failure_rate, n, and what else a run counts, e.g. context_exceeded_rate, pool_size.)
    counts = {k for k in metrics if k == "n" or k.endswith(("_rate", "_size"))}
    assert {"failure_rate", "n"} <= counts
    assert {k for k in metrics if "/" not in k} - counts == {"recall@10", "recall@20", "recall@50", "mrr"}
    for key, value in by_hand(train_queries, (10, 20, 50)).items():
        assert metrics[key] == pytest.approx(value, abs=1e-9), key
    assert log.results.scores[0].metrics["recall@10"].value == metrics["recall@10"]
    # The default split is test: the nine others; the pool came from the cache (only queries were sent).
    assert {s.id for s in default.samples} == {q.id for q in DATA.queries} - train and default.eval.metadata[
        "split"
    ] == "test"
    assert len(default_requests) == 9 and all(item.text for body in default_requests for item in parse_inputs(body))


@pytest.mark.slow
def test_unknown_split_and_conflicting_metrics_fail_with_one_clear_message(tmp_path):
    folder = split_folder(tmp_path, {"func_tire"})
    args = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    proc = run_cli_task(tmp_path, "dev", args, f"data={folder}", "split=dev", expect=1)
    assert "unknown split 'dev'; the queries have test, train (or all)" in proc.stderr + proc.stdout
    proc = run_cli_task(tmp_path, "conflict", args, "k=10,50", "metrics=recall@20", expect=1)
    assert "metrics names recall@20, but the recall cut-offs are k=10,50" in proc.stderr + proc.stdout


def test_pool_captions_opt_in_sends_them_and_is_a_separate_cache_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("ECOM_TASKS_CACHE", str(tmp_path / "cache"))
    args = {"base_url": "", "model": "vlm2vec-test"}
    captions = {p.description for p in DATA.pool}
    with serve_embeddings(policy) as server:
        args["base_url"] = server.base_url
        plain = run_here(tmp_path, "plain", args)
        server.requests.clear()
        opted = run_here(tmp_path, "opted", args, pool_captions="true")
        requests = list(server.requests)
    texts = [item.text for body in requests for item in parse_inputs(body)]
    assert sorted(t for t in texts if t in captions) == sorted(
        captions
    )  # all 26 pool items embedded again, with captions
    assert opted.eval.metadata["pool_input"] == "image+caption" and opted.eval.metadata["pool_captions"] is True
    assert plain.eval.metadata["pool_input"] == "image"
    assert opted.samples[0].scores["rmir_scorer"].metadata["pool_embedded"] == 26
    # By hand, pool vectors from image and caption together.
    pool = unit([vector(p.description, (Path(p.image).read_bytes(),)) for p in DATA.pool])
    ids = [p.id for p in DATA.pool]
    recalls = []
    for q in DATA.queries:
        query = unit([vector(q.query_text, (Path(q.query_image).read_bytes(),))])[0]
        top = [ids[i] for i in np.argsort(-(pool @ query), kind="stable")[:20]]
        recalls.append(len(set(top) & set(q.positives)) / len(q.positives))
    metrics = {k: m.value for s in opted.results.scores for k, m in s.metrics.items()}
    assert metrics["recall@20"] == pytest.approx(float(np.mean(recalls)), abs=1e-9)


# --- queries and candidates embedded differently (UME-R1: generative queries, discriminative candidates) ---


def test_query_and_pool_sides_take_their_own_instruction_body_and_server(tmp_path):
    with serve_embeddings(policy) as pool_server, serve_embeddings(policy) as query_server:
        embedder = OpenAIEmbeddings(
            base_url=pool_server.base_url,
            model="ume-r1-disc",
            pool_instruction="Represent the given image.\n<disc_emb>\n",
            pool_extra_body={"mode": "discriminative"},
            query_base_url=query_server.base_url,
            query_model="ume-r1-gen",
            query_instruction="{text}\n<disc_emb>\nThink first, then use the <gen_emb> tag.",
            query_extra_body={"mode": "generative"},
        )
        image = DATA.pool[0].image
        embedder.embed([EmbedInput(image=image)], "pool")
        embedder.embed([EmbedInput(text="Which tool fits?", image=DATA.queries[0].query_image)], "query")
        (pool_body,) = pool_server.requests
        (query_body,) = query_server.requests
    assert pool_body["model"] == "ume-r1-disc" and pool_body["mode"] == "discriminative"
    assert [p.get("text") for p in pool_body["messages"][0]["content"]] == [
        None,
        "Represent the given image.\n<disc_emb>\n",
    ]
    assert query_body["model"] == "ume-r1-gen" and query_body["mode"] == "generative"
    assert (
        query_body["messages"][0]["content"][1]["text"]
        == "Which tool fits?\n<disc_emb>\nThink first, then use the <gen_emb> tag."
    )


def test_the_pool_cache_is_keyed_by_pool_side_settings_only(tmp_path, monkeypatch):
    monkeypatch.setenv("ECOM_TASKS_CACHE", str(tmp_path / "cache"))
    base = {"base_url": "", "model": "vlm2vec-test"}
    with serve_embeddings(policy) as server:
        base["base_url"] = server.base_url
        run_here(tmp_path, "first", base)
        server.requests.clear()
        query_side = run_here(
            tmp_path,
            "query_side",
            {**base, "query_instruction": "Find the answer: ", "query_extra_body": {"mode": "gen"}},
        )
        after_query_change = list(server.requests)
        server.requests.clear()
        pool_side = run_here(tmp_path, "pool_side", {**base, "pool_instruction": "Represent the image."})
        after_pool_change = list(server.requests)
    # A new query instruction re-uses the cached pool: only the 13 queries are sent, with the instruction.
    assert len(after_query_change) == 13 and all(b["mode"] == "gen" for b in after_query_change)
    assert all(item.text.startswith("Find the answer: ") for b in after_query_change for item in parse_inputs(b))
    assert query_side.samples[0].scores["rmir_scorer"].metadata["pool_cached"] == 26
    # A new pool instruction changes the pool vectors: all 26 are embedded again.
    pool_texts = [
        item.text for b in after_pool_change for item in parse_inputs(b) if item.text == "Represent the image."
    ]
    assert len(pool_texts) == 26 and pool_side.samples[0].scores["rmir_scorer"].metadata["pool_embedded"] == 26


class _RawReplyHandler(JsonHandler):
    """Answers every POST with 200 and the owner's raw bytes: a broken or hostile embeddings server."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.server.owner.reply)))
        self.end_headers()
        self.wfile.write(self.server.owner.reply)


class _RawReplyServer(LoopbackServer):
    handler = _RawReplyHandler

    def __init__(self, reply: bytes) -> None:
        super().__init__()
        self.reply = reply


@pytest.mark.parametrize(
    "reply",
    [
        b"<html>gateway</html>",
        b'{"object": "list"}',
        b'{"data": {"index": 0, "embedding": [1.0]}}',
        b'{"data": [{"embedding": [1.0, 2.0]}]}',
        b'{"data": [{"index": "0", "embedding": [1.0]}]}',
        b'{"data": [{"index": 0, "embedding": ["1.0", "2.0"]}]}',
        b'{"data": [{"index": 0, "embedding": [NaN, 1.0]}]}',
        b'{"data": [{"index": 0, "embedding": [' + b"9" * 5000 + b"]}]}",
        b"[" * 5000 + b"]" * 5000,
    ],
    ids=["html", "no-data", "data-not-list", "no-index", "string-index", "strings", "nan", "huge-int", "deep"],
)
def test_a_malformed_embeddings_reply_is_a_request_error_naming_the_server(reply):
    with _RawReplyServer(reply) as server:
        embedder = OpenAIEmbeddings(base_url=server.base_url, model="m", max_retries=0)
        with pytest.raises(EmbeddingRequestError, match=r"/embeddings answered 200 without an OpenAI embeddings list"):
            embedder.embed([EmbedInput(text="x")], "query")
