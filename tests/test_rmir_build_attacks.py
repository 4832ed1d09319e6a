"""``ecom-tasks build rmir`` on a build folder a colleague tampered with: ``data`` or ``data/images`` a
symlink to a folder outside. The folder the link points to is never deleted, emptied or written (its
tree is hashed before and after); the build stops with one short message naming the link, before any
model call on a fresh folder, and before re-assembling on a finished one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from attack_helpers import digest_changes, plant_symlink, tree_digest
from helpers import run_cli
from loopback.openai_server import serve_openai_compatible
from test_rmir_construction_pipeline import build_command, loop_env, scenario_seeds, scripted_policy

from ecom_tasks.data import fixtures_dir
from ecom_tasks.files import FileRefused
from ecom_tasks.rmir.construction.pipeline import BuildOptions, build


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A colleague's data set outside the build folder: tables and an images/ folder of real pictures."""
    folder = tmp_path / "victim"
    shutil.copytree(fixtures_dir("rmir"), folder)
    assert any((folder / "images").iterdir())
    return folder


def refused_run(out: Path, seeds: Path, server) -> str:
    """Run the build command; assert it failed with one short message (no traceback); return stderr."""
    proc = run_cli(build_command(seeds, out), env=loop_env(server), cwd=out.parent)
    assert proc.returncode != 0, proc.stdout[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc.stderr


@pytest.mark.parametrize("link", ["data", "data/images"])
def test_a_fresh_build_folder_with_a_planted_symlink_is_refused_before_any_model_call(tmp_path, victim, link):
    out = tmp_path / "build"
    (out / "data").mkdir(parents=True)
    planted = plant_symlink(out / link, victim if link == "data" else victim / "images")
    before = tree_digest(victim)
    with pytest.raises(FileRefused) as info:
        build(BuildOptions(out=out, model="ecom/baseline", stage_options={"display": "none"}))
    assert f"{planted}: a symbolic link inside the build folder" in str(info.value)
    assert digest_changes(before, tree_digest(victim)) == []
    assert not (out / "logs").exists()  # no stage started


@pytest.mark.slow
def test_rerunning_a_finished_build_whose_data_became_a_symlink_never_touches_what_it_points_to(tmp_path):
    seeds = scenario_seeds(tmp_path / "seeds")
    out = tmp_path / "build"
    with serve_openai_compatible(scripted_policy) as server:
        first = run_cli(build_command(seeds, out), env=loop_env(server), cwd=tmp_path)
        assert first.returncode == 0, first.stderr[-3000:]
        server.requests.clear()
        # The finished data set moved outside (the victim), and a link put in its place.
        outside = tmp_path / "victim"
        shutil.move(out / "data", outside)
        assert any((outside / "images").iterdir())
        for link, target in (("data", outside), ("data/images", outside / "images")):
            if link == "data/images":
                (out / "data").unlink()
                (out / "data").mkdir()
            planted = plant_symlink(out / link, target)
            before = tree_digest(outside)
            message = refused_run(out, seeds, server)
            assert str(planted) in message and "symbolic link" in message
            assert digest_changes(before, tree_digest(outside)) == []
        assert server.requests == []  # refused before any model call
