"""A build whose inputs lie inside its own build folder, where it writes or clears its data set: the seed
images of ``ecom-tasks build rmir`` in ``data/images`` (a folder the build replaces, and removes when it
stops without a data set) and a RAIR candidate's image where the build places another candidate's. Each
is refused before the first model call, and the input is left as it was. Then a build that ends without a
data set removes the one an earlier build wrote: it must not pass for this one's."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from helpers import mark_build_folder
from loopback.openai_server import last_user_text, serve_openai_compatible
from test_rmir_construction_pipeline import GENERATION_REPLY, _stage, scenario_seeds

from ecom_tasks.cli import main as ecom_tasks_main
from ecom_tasks.construction import image_file_name
from ecom_tasks.data import ConfigurationError, fixtures_dir
from ecom_tasks.rmir.construction.pipeline import BuildOptions, build


def digests(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*.*")}


def refused(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as exited:
        ecom_tasks_main(argv)
    printed = capsys.readouterr()
    assert exited.value.code == 1 and "Traceback" not in printed.err, printed
    return printed.out + printed.err


def test_rmir_seed_images_in_the_builds_data_images_are_refused_before_any_model_call(tmp_path, capsys):
    # The bundled seeds copied into the build folder's data/: their images are data/images/*.png. The
    # offline baseline declines every category without captions, a stop that clears data/images.
    out = tmp_path / "build"
    mark_build_folder(out, "rmir")  # a build folder whose data/images now holds the seeds
    shutil.copytree(fixtures_dir("rmir"), out / "data")
    before = digests(out / "data" / "images")
    assert len(before) == 39
    argv = ["build", "rmir", "--out", str(out), "--seeds", str(out / "data" / "seeds.jsonl")]
    printed = refused([*argv, "--model", "ecom/baseline", "--display", "none"], capsys)
    assert f"{out / 'data' / 'images'}: holds the seed image {out / 'data' / 'images'}" in printed, printed
    assert "a build replaces that folder; choose another --out" in printed
    assert digests(out / "data" / "images") == before
    assert not (out / "logs").exists()  # no stage started


def test_a_rair_candidate_image_where_another_candidates_goes_is_refused_before_any_model_call(tmp_path, capsys):
    # Candidate c09's image is placed where the build would put c08's (data/images/<c08's name>).
    out = tmp_path / "build"
    mark_build_folder(out, "rair")
    shutil.copytree(fixtures_dir("rair_build"), out / "inputs")
    rows = [json.loads(line) for line in (out / "inputs" / "candidates.jsonl").read_text(encoding="utf-8").splitlines()]
    c08, c09 = (next(r for r in rows if r["id"] == f"rair-build-syn-{c}") for c in ("c08", "c09"))
    taken = out / "data" / "images" / image_file_name(c08["id"], c08["image"])
    taken.parent.mkdir(parents=True)
    shutil.copy(out / "inputs" / c09["image"], taken)
    c09["image"] = f"../data/images/{taken.name}"
    (out / "inputs" / "candidates.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    before = taken.read_bytes()
    argv = ["build", "rair", "--out", str(out), "--candidates", str(out / "inputs" / "candidates.jsonl")]
    printed = refused([*argv, "--allow-outside-images", "--model", "ecom/baseline", "--display", "none"], capsys)
    assert f"{taken}: is another candidate's image (an input); choose another --out" in printed, printed
    assert taken.read_bytes() == before and not (out / "logs").exists()


def every_judge_says_no(body: dict) -> str:
    stage = _stage(last_user_text(body))
    if stage == "generate":
        return GENERATION_REPLY
    if stage == "filter":
        return "<reasoning>fine</reasoning>\n<verdict>yes</verdict>"
    return "<candidate>c</candidate>\n<reasoning>no</reasoning>\n<verdict>False</verdict>"


@pytest.mark.slow
def test_an_rmir_build_that_keeps_no_query_removes_an_earlier_data_set(tmp_path, monkeypatch):
    seeds = scenario_seeds(tmp_path / "seeds")
    out = tmp_path / "build"
    mark_build_folder(out, "rmir")
    stale = {"data/queries.jsonl": b'{"id": "earlier"}\n', "data/pool.jsonl": b'{"id": "earlier"}\n'}
    stale["data/images/earlier.png"] = (seeds / "images" / "z1.png").read_bytes()
    for name, content in stale.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(content)
    with serve_openai_compatible(every_judge_says_no) as server:
        monkeypatch.setenv("LOOP_BASE_URL", server.base_url)
        monkeypatch.setenv("LOOP_API_KEY", "none")
        options = BuildOptions(out=out, seeds=seeds, model="openai-api/loop/writer", judges=1)
        options.stage_options = {"display": "none"}
        with pytest.raises(ConfigurationError, match="no query kept a confirmed positive: nothing to write"):
            build(options)
    assert not (out / "data" / "queries.jsonl").exists() and not (out / "data" / "pool.jsonl").exists()
    assert not (out / "data" / "images").exists()
    assert (seeds / "images" / "z1.png").read_bytes() == stale["data/images/earlier.png"]  # the seeds stay
