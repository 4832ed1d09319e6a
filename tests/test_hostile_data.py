"""Hostile and careless datasets, each with the attack itself: images outside the dataset's folder,
URL images, a decompression bomb, non-UTF-8 and broken CSV files, folders with upper-case suffixes and
sub-folders, path typos that must not reach the hub, and EcomTasksError's one-line message."""

from __future__ import annotations

import base64
import json
import struct
import warnings
import zlib
from pathlib import Path

import datasets
import pytest
from helpers import baseline_rule, policy_from_rule
from inspect_ai import eval as inspect_eval
from loopback.openai_server import image_parts, serve_openai_compatible
from loopback.server import JsonHandler, LoopbackServer

from ecom_tasks import images as images_module
from ecom_tasks.cli import main as ecom_tasks_cli
from ecom_tasks.data import (
    DataValidationError,
    Problem,
    SkippedFilesWarning,
    fixtures_dir,
    load_rows,
    looks_like_local_path,
)
from ecom_tasks.ecomeval.schema import load_records as load_ecomeval
from ecom_tasks.images import MAX_IMAGE_PIXELS, ImageAccess
from ecom_tasks.monbench.schema import load_records as load_monbench
from ecom_tasks.rair.schema import load_records as load_rair
from ecom_tasks.rmir.schema import load_data as load_rmir
from ecom_tasks.user_errors import find_user_error, user_message

RED = (fixtures_dir("rair") / "images" / "color_red.png").read_bytes()
BLUE = (fixtures_dir("rair") / "images" / "color_blue.png").read_bytes()
MUG = (fixtures_dir("ecomeval") / "images" / "mug.png").read_bytes()


def rair_row(**changes) -> dict:
    row = {
        "id": "v1",
        "subset": "visual",
        "query": "red hoodie",
        "title": "Unisex cotton hoodie",
        "image": "a.png",
        "industry": "Fashion & Apparel",
        "label": "L4",
        "rule_ids": [],
        "language": "en",
    }
    row.update(changes)
    return row


def monbench_row(**changes) -> dict:
    row = {
        "id": "m1",
        "task": "product_co_purchase",
        "split": "test",
        "question": "User Purchase: coffee beans",
        "choices": ["coffee filters", "car tires", "dog leash", "desk lamp"],
        "answer": 0,
    }
    row.update(changes)
    return row


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def problems_of(call) -> list[str]:
    with pytest.raises(DataValidationError) as info:
        call()
    return [str(p) for p in info.value.problems]


# --- images outside the dataset's folder ----------------------------------------------------------


@pytest.fixture()
def outside(tmp_path: Path) -> dict[str, Path]:
    """A dataset folder, and beside it a 'secret' image the dataset must not reach."""
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "secret.png").write_bytes(BLUE)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.png").write_bytes(RED)
    return {"root": tmp_path, "data": tmp_path / "data", "secret": tmp_path / "secret" / "secret.png"}


def test_relative_and_absolute_paths_leaving_the_folder_are_refused_alike_whether_the_file_exists(outside):
    secret = outside["secret"]
    values = [
        "../secret/secret.png",
        "../secret/no-such.png",
        str(secret),
        str(secret.with_name("no-such.png")),
        "~/secret.png",
    ]
    path = write_jsonl(outside["data"] / "visual.jsonl", [rair_row(id=f"v{i}", image=v) for i, v in enumerate(values)])
    found = problems_of(lambda: load_rair(path))
    refusal = "leaves the dataset's folder: refused (allow paths outside it with allow_outside_images=true)"
    assert found == [f"{path}:{i + 1}:image: image path {v!r} {refusal}" for i, v in enumerate(values)]
    # The refusal is decided before the target is touched: the same words for a file that exists and one that does not.
    assert len({p.split(":image: ")[1].replace(repr(v), "V") for p, v in zip(found, values)}) == 1
    # Refused even when images are not checked (a text-only run), and in a folder given as the data.
    assert len(problems_of(lambda: load_rair(path, check_images=False))) == len(values)
    # Inside the folder: fine, also written absolute; "./" and "sub/../" that stay inside too.
    inside = write_jsonl(
        outside["data"] / "inside.jsonl",
        [
            rair_row(id="r1", image="a.png"),
            rair_row(id="r2", image=str(outside["data"] / "a.png")),
            rair_row(id="r3", image="./x/../a.png"),
        ],
    )
    assert {r.image for r in load_rair(inside)} == {str((outside["data"] / "a.png").resolve())}
    # Allowed: read as before.
    allowed = load_rair(
        write_jsonl(outside["data"] / "ok.jsonl", [rair_row(image="../secret/secret.png")]),
        image_access=ImageAccess(outside=True),
    )
    assert [r.image for r in allowed] == [str(secret.resolve())]


def test_a_symlink_pointing_out_of_the_folder_is_refused(outside):
    (outside["data"] / "link").symlink_to(outside["root"] / "secret", target_is_directory=True)
    path = write_jsonl(outside["data"] / "visual.jsonl", [rair_row(image="link/secret.png")])
    [problem] = problems_of(lambda: load_rair(path))
    assert problem.startswith(f"{path}:1:image: image path 'link/secret.png' leaves the dataset's folder")


def test_ecomeval_and_rmir_refuse_outside_images_too(outside):
    row = {
        "id": "e1",
        "category": "ecom_multimodal",
        "task": "t",
        "language": "en",
        "question": "q?",
        "reference": "r",
        "images": ["a.png", "../secret/secret.png"],
    }
    path = write_jsonl(outside["data"] / "ecomeval.jsonl", [row])
    [problem] = problems_of(lambda: load_ecomeval(path))
    assert problem.startswith(f"{path}:1:images[1]: image path '../secret/secret.png' leaves the dataset's folder")
    assert load_ecomeval(path, image_access=ImageAccess(outside=True))[0].images[1] == str(outside["secret"].resolve())

    folder = outside["data"] / "rmir"
    (folder / "a.png").parent.mkdir()
    (folder / "a.png").write_bytes(RED)
    write_jsonl(folder / "pool.jsonl", [{"id": "p1", "image": "a.png"}, {"id": "p2", "image": str(outside["secret"])}])
    write_jsonl(
        folder / "queries.jsonl",
        [
            {
                "id": "q1",
                "category": "functional",
                "query_text": "?",
                "query_image": "../../secret/secret.png",
                "positives": ["p1"],
            }
        ],
    )
    found = problems_of(lambda: load_rmir(folder))
    assert [p.split(": image path")[0] for p in found] == [
        f"{folder / 'pool.jsonl'}:2:image",
        f"{folder / 'queries.jsonl'}:1:query_image",
    ]


def test_an_outside_image_never_reaches_the_model_server(outside, monkeypatch):
    """RAIR visual through Inspect against the loopback server: refused at load, nothing sent; allowed, it is sent."""
    path = write_jsonl(outside["data"] / "visual.jsonl", [rair_row(image="../secret/secret.png")])
    with serve_openai_compatible(policy_from_rule(baseline_rule)) as server:
        monkeypatch.setenv("VLLM_BASE_URL", server.base_url)
        monkeypatch.setenv("VLLM_API_KEY", "test-key")
        with pytest.raises(
            DataValidationError, match=r"visual\.jsonl:1:image: image path '\.\./secret/secret\.png' leaves"
        ):
            inspect_eval(
                "ecom_tasks/rair_visual",
                task_args={"data": str(path)},
                model="openai-api/vllm/test-model",
                display="none",
            )
        assert server.requests == []
        # The same run with the opt-in (-T allow_outside_images=true) sends exactly that file.
        [log] = inspect_eval(
            "ecom_tasks/rair_visual",
            task_args={"data": str(path), "allow_outside_images": "true"},
            model="openai-api/vllm/test-model",
            display="none",
        )
        requests = list(server.requests)
    assert log.status == "success"
    [url] = [part["image_url"]["url"] for body in requests for part in image_parts(body)]
    assert base64.b64decode(url.split(",", 1)[1]) == BLUE


# --- URL images -----------------------------------------------------------------------------------


class _FileHandler(JsonHandler):
    def do_GET(self) -> None:
        owner = self.server.owner
        status, content_type, body = owner.files.get(self._path(), (404, "text/plain", b"not found"))
        owner.hits.append(self._path())
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class FileServer(LoopbackServer):
    handler = _FileHandler

    def __init__(self, files: dict[str, tuple[int, str, bytes]]) -> None:
        super().__init__()
        self.files, self.hits = files, []

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


def test_url_images_are_refused_unless_allowed_then_fetched_once_with_checks(tmp_path, monkeypatch):
    files = {
        "/red.png": (200, "image/png", RED),
        "/page.png": (200, "text/html", b"<html>not an image</html>"),
        "/big.png": (200, "image/png", MUG),
        "/fake.png": (200, "image/png", b"not a png at all"),
    }
    monkeypatch.setattr(images_module, "MAX_URL_IMAGE_BYTES", len(RED) + 10)
    assert len(MUG) > len(RED) + 10
    with FileServer(files) as server:
        urls = [server.url(p) for p in ("/red.png", "/missing.png", "/page.png", "/big.png", "/fake.png")]
        row = {
            "id": "e1",
            "category": "ecom_multimodal",
            "task": "t",
            "language": "en",
            "question": "q?",
            "reference": "r",
        }
        path = write_jsonl(
            tmp_path / "ecomeval.jsonl", [{**row, "id": f"e{i}", "images": [u]} for i, u in enumerate(urls)]
        )
        refused = problems_of(lambda: load_ecomeval(path))
        assert server.hits == []  # refused before any request
        assert refused == [f"{path}:{i}:images[0]: {images_module.URL_REFUSED.format(cap=0)}" for i in range(1, 6)]
        allowed = ImageAccess(urls=True)
        found = problems_of(lambda: load_ecomeval(path, image_access=allowed))
        good = write_jsonl(tmp_path / "good.jsonl", [{**row, "images": [urls[0]]}])
        [record] = load_ecomeval(good, image_access=allowed)
    # Every bad URL is a load-time file:row:field problem, listed together, before any model call.
    assert found[0] == f"{path}:2:images[0]: fetching {urls[1]} answered HTTP 404"
    assert found[1] == f"{path}:3:images[0]: {urls[2]} is not an image (Content-Type 'text/html')"
    assert found[2] == f"{path}:4:images[0]: {urls[3]} is {len(MUG):,} bytes, over the limit of {len(RED) + 10:,}"
    assert found[3].startswith(f"{path}:5:images[0]: pillow cannot read it")
    assert len(found) == 4
    # A good URL reaches the model as the bytes we fetched (a data URI), not as a URL the provider would fetch.
    assert record.images[0].startswith("data:image/png;base64,")
    assert base64.b64decode(record.images[0].split(",", 1)[1]) == RED


# --- the decompression bomb -----------------------------------------------------------------------


def png_bomb(width: int = 20000, height: int = 20000) -> bytes:
    """A real 1-bit greyscale PNG of width x height zero pixels: a few dozen KB on disk."""
    row = b"\x00" * (1 + (width + 7) // 8)  # filter byte + packed pixels
    packer = zlib.compressobj(9)
    idat = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def test_decompression_bomb_is_a_file_row_image_problem_in_validate_and_task_loading(tmp_path, capsys):
    bomb = png_bomb()
    assert 40_000 < len(bomb) < 60_000  # the 48 KB
    (tmp_path / "bomb.png").write_bytes(bomb)
    (tmp_path / "big.png").write_bytes(png_bomb(10000, 10000))  # 1.1x the cap: pillow would only warn
    path = write_jsonl(
        tmp_path / "visual.jsonl", [rair_row(id="b1", image="bomb.png"), rair_row(id="b2", image="big.png")]
    )
    with pytest.raises(SystemExit) as exited:
        ecom_tasks_cli(["validate", "rair", str(path)])
    assert exited.value.code == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(
        f"{path}:1:image: {tmp_path / 'bomb.png'}: over the limit of {MAX_IMAGE_PIXELS:,} pixels (a decompression bomb?)"
    )
    assert (
        err[1]
        == f"{path}:2:image: {tmp_path / 'big.png'}: 10000x10000 pixels is over the limit of {MAX_IMAGE_PIXELS:,} pixels (a decompression bomb?)"
    )
    assert err[2] == f"INVALID: 2 problem(s) in {path}"
    # Task loading: the Inspect task raises the same problems (no DecompressionBombError).
    from ecom_tasks.inspect_evals.rair import rair_visual

    assert [p.split(": ")[0] for p in problems_of(lambda: rair_visual(data=str(path)))] == [
        f"{path}:1:image",
        f"{path}:2:image",
    ]
    # Hub-style bytes and data: URIs go through the same check.
    uri = "data:image/png;base64," + base64.b64encode(bomb).decode()
    ecomeval = write_jsonl(
        tmp_path / "e.jsonl",
        [
            {
                "id": "e1",
                "category": "ecom_multimodal",
                "task": "t",
                "language": "en",
                "question": "q",
                "reference": "r",
                "images": [uri],
            }
        ],
    )
    [problem] = problems_of(lambda: load_ecomeval(ecomeval))
    assert problem.startswith(f"{ecomeval}:1:images[0]: over the limit of {MAX_IMAGE_PIXELS:,} pixels")


# --- encodings and CSV rows -----------------------------------------------------------------------


def test_non_utf8_json_lines_name_line_and_byte_offset(tmp_path, capsys):
    path = tmp_path / "latin1.jsonl"
    good = json.dumps(monbench_row()) + "\n"
    bad = (
        json.dumps(monbench_row(id="m2", question="User Purchase: café"), ensure_ascii=False).encode("latin-1") + b"\n"
    )
    path.write_bytes(good.encode() + bad + json.dumps(monbench_row(id="m3")).encode() + b"\n")
    offset = len(good.encode()) + bad.index(b"\xe9")
    expected = f"{path}:2:-: not UTF-8 text: byte 0xe9 at byte offset {offset}"
    assert problems_of(lambda: load_monbench(path)) == [expected]
    with pytest.raises(SystemExit):
        ecom_tasks_cli(["validate", "monbench", str(path)])
    assert capsys.readouterr().err.splitlines()[0] == expected
    # A UTF-8 byte-order mark is not an error.
    path.write_bytes(b"\xef\xbb\xbf" + good.encode())
    assert [r.id for r in load_monbench(path)] == ["m1"]


def test_csv_errors_name_the_row(tmp_path):
    header = "id,task,split,question,A,B,C,D,answer\n"
    line = "m{n},product_co_purchase,test,User Purchase: beans,filters,tires,leash,lamp,A\n"
    extra = tmp_path / "extra.csv"
    extra.write_text(
        header + line.format(n=1) + line.format(n=2) + line.format(n=3).replace(",A\n", ",A,surplus\n"),
        encoding="utf-8",
    )
    assert problems_of(lambda: load_monbench(extra)) == [f"{extra}:3:-: 10 fields but the header has 9 (line 4)"]
    latin = tmp_path / "latin1.csv"
    latin.write_bytes(
        (header + line.format(n=1)).encode() + line.format(n=2).replace("beans", "café").encode("latin-1")
    )
    offset = len((header + line.format(n=1)).encode()) + line.format(n=2).replace("beans", "café").encode(
        "latin-1"
    ).index(b"\xe9")
    assert problems_of(lambda: load_monbench(latin)) == [
        f"{latin}:2:-: not UTF-8 text: byte 0xe9 at byte offset {offset} (line 3)"
    ]


# --- folders --------------------------------------------------------------------------------------


def test_folder_reads_upper_case_suffixes_and_names_skipped_sub_folder_files(tmp_path, capsys):
    folder = tmp_path / "data"
    upper = write_jsonl(folder / "PART1.JSONL", [monbench_row(), monbench_row(id="m2", answer=7)])
    write_jsonl(folder / "part2.jsonl", [monbench_row(id="m3")])
    nested = write_jsonl(folder / "old" / "part0.jsonl", [monbench_row(id="m0")])
    deeper = write_jsonl(folder / "old" / "v1" / "PART.CSV", [monbench_row(id="mx")])
    (folder / "images").mkdir()
    (folder / "images" / "a.png").write_bytes(RED)  # images in a sub-folder are not data: no word about them
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = problems_of(lambda: load_monbench(folder))
    assert found == [f"{upper}:2:answer: must be 0-3 or A-D, got 7"]  # the upper-case file was read
    skipped = [str(w.message) for w in caught if issubclass(w.category, SkippedFilesWarning)]
    note = f"not read: in a sub-folder of {folder} (give its own path to read it)"
    assert skipped == [f"{nested}:0:-: {note}", f"{deeper}:0:-: {note}"]
    # ecom-tasks validate prints them.
    write_jsonl(upper, [monbench_row()])
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "A.JSONL").write_bytes(upper.read_bytes())
    write_jsonl(fresh / "sub" / "b.jsonl", [monbench_row(id="m9")])
    with pytest.raises(SystemExit) as exited:
        ecom_tasks_cli(["validate", "monbench", str(fresh)])
    assert exited.value.code == 0
    captured = capsys.readouterr()
    assert f"WARNING: {fresh / 'sub' / 'b.jsonl'}:0:-: not read: in a sub-folder of {fresh}" in captured.err
    assert captured.out.startswith(f"OK: 1 monbench records in {fresh}")


# --- path typos never reach the hub ---------------------------------------------------------------


def test_path_like_names_that_do_not_exist_are_no_such_file_and_never_a_hub_query(tmp_path, monkeypatch):
    calls: list[str] = []
    hub = datasets.DatasetDict({"test": datasets.Dataset.from_list([monbench_row()])})
    monkeypatch.setattr(datasets, "load_dataset", lambda name, *a, **kw: calls.append(name) or hub)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data.jsonl").write_text(json.dumps(monbench_row()) + "\n", encoding="utf-8")
    for typo in ("data.jsonll", "./data", "data/x.jsonl", "data/sub/x", "~/no-such-folder", "DATA.CSV"):
        assert looks_like_local_path(typo), typo
        [problem] = problems_of(lambda typo=typo: load_rows(typo))
        assert problem == f"{typo}:0:-: no such file or folder (a Hugging Face dataset id has the form owner/name)"
    [problem] = problems_of(lambda: load_rmir("./rmri"))
    assert problem == "./rmri:0:-: no such folder (a Hugging Face dataset id has the form owner/name)"
    assert calls == []
    # Hub ids still go to the hub.
    for hub_id in ("org/name", "squad", "org/data-set.v2"):
        assert not looks_like_local_path(hub_id)
        assert len(load_rows(hub_id)) == 1
    assert calls == ["org/name", "squad", "org/data-set.v2"]


# --- the short message ----------------------------------------------------------------------------


def test_user_error_is_found_in_groups_and_explicit_causes_only():
    one = DataValidationError([Problem("d.jsonl", 0, "-", "no such file or folder")])
    assert find_user_error(one) is one
    assert find_user_error(ExceptionGroup("g", [ValueError("x"), ExceptionGroup("h", [one])])) is one
    wrapped = RuntimeError("task failed")
    wrapped.__cause__ = one
    assert find_user_error(wrapped) is one
    during = RuntimeError("a bug while handling it")
    during.__context__ = one  # implicit context: a different bug, shown as a traceback
    assert find_user_error(during) is None
    assert user_message(one) == "ecom-tasks: d.jsonl:0:-: no such file or folder"
    many = DataValidationError([Problem("d.jsonl", i, "id", "missing") for i in range(1, 31)])
    lines = user_message(many).splitlines()
    assert lines[0] == "ecom-tasks: 30 problems in the data:" and len(lines) == 12
    assert lines[-1] == "  ... and 20 more (ecom-tasks validate <benchmark> <data> lists them all)"
