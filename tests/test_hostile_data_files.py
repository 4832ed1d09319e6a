"""Data files that are not what they claim (issue 25), each with the attack itself.

FIFOs, sockets and devices as data, symlinked folders and files leading out of a
data folder, JSON nested 5,000 deep, a 5,000-digit integer, NaN, empty files and
non-UTF-8 bytes: every reader of data (the row loader, the rules file, images,
provenance hashing) goes through ``ecom_tasks/files.py``, so each is a problem
naming the file, never a hang, a walk outside the folder or a traceback, in the
loaders of both frameworks and in ``ecom-tasks validate``.

A reader that would block on a FIFO is unblocked by :func:`fifo_watchdog` after a
few seconds, so a regression fails the test instead of hanging the suite.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import threading
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from attack_helpers import swap_at_open
from helpers import run_cli

from ecom_tasks.data import DataValidationError, EcomTasksError, SkippedFilesWarning, fixtures_dir, load_rows
from ecom_tasks.ecomeval.schema import load_records as load_ecomeval
from ecom_tasks.files import FileRefused
from ecom_tasks.monbench.schema import load_records as load_monbench
from ecom_tasks.provenance import content_sha256, file_sha256
from ecom_tasks.rair.rules import load_rules
from ecom_tasks.rair.schema import load_records as load_rair

RED = (fixtures_dir("rair") / "images" / "color_red.png").read_bytes()
FIFO = "a FIFO (named pipe), not a regular file: not read"
DEEP = "JSON nested more than 64 levels deep"


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


def jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def problems_of(call: Callable[[], object]) -> list[str]:
    with pytest.raises(DataValidationError) as info:
        call()
    return [str(p) for p in info.value.problems]


@contextlib.contextmanager
def fifo_watchdog(*fifos: Path, after: float = 8.0) -> Iterator[None]:
    """Opens and closes each of ``fifos`` for writing once ``after`` seconds have passed while a reader
    holds it open (a reader blocked in ``open`` or ``read`` then sees end of file), and fails the test
    if it had to: a reader that blocks on a FIFO becomes a failure, not a hung suite."""
    stop = threading.Event()
    unblocked: list[Path] = []

    def watch() -> None:
        if stop.wait(after):
            return
        while not stop.is_set():
            for fifo in fifos:
                try:
                    fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO unless someone is reading it
                except OSError:
                    continue
                unblocked.append(fifo)
                os.close(fd)
            stop.wait(0.2)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
    assert not unblocked, f"a reader blocked on {unblocked}"


@contextlib.contextmanager
def unix_socket(path: Path) -> Iterator[Path]:
    """A listening Unix socket at ``path`` (a file system entry that is neither a file nor a FIFO)."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        server.listen(1)
        yield path
    finally:
        server.close()


@pytest.fixture()
def victim(tmp_path: Path) -> Path:
    """A folder outside the data folder holding a colleague's data (valid rows, so reading it would succeed)."""
    outside = tmp_path / "outside"
    jsonl(outside / "secret.jsonl", [monbench_row(id="secret-1")])
    jsonl(outside / "deeper" / "secret2.jsonl", [monbench_row(id="secret-2")])
    return outside


# --- not regular files ----------------------------------------------------------------------------


def test_a_fifo_socket_or_device_as_the_data_path_is_refused_by_name(tmp_path):
    fifo = tmp_path / "data.jsonl"
    os.mkfifo(fifo)
    with fifo_watchdog(fifo):
        assert problems_of(lambda: load_monbench(fifo)) == [f"{fifo}:0:-: {FIFO}"]
        assert problems_of(lambda: load_rair(fifo)) == [f"{fifo}:0:-: {FIFO}"]
    device = tmp_path / "zero.jsonl"
    device.symlink_to("/dev/zero")  # named by the user, so followed: to a device that never ends
    assert problems_of(lambda: load_rows(device)) == [f"{device}:0:-: a device, not a regular file: not read"]
    with unix_socket(tmp_path / "sock.jsonl") as sock:
        assert problems_of(lambda: load_rows(sock)) == [f"{sock}:0:-: a socket, not a regular file: not read"]


def test_special_files_in_a_data_folder_are_refused_by_name_and_other_names_ignored(tmp_path):
    folder = tmp_path / "data"
    jsonl(folder / "a.jsonl", [monbench_row()])
    os.mkfifo(folder / "b.jsonl")
    (folder / "c.JSONL").symlink_to("/dev/zero")
    (folder / "d.csv").symlink_to(folder / "no-such.csv")
    os.mkfifo(folder / "notes.txt")  # not a data file name: not ours to read or refuse
    with fifo_watchdog(folder / "b.jsonl", folder / "notes.txt"):
        assert problems_of(lambda: load_monbench(folder)) == [
            f"{folder / 'b.jsonl'}:0:-: {FIFO}",
            f"{folder / 'c.JSONL'}:0:-: a device, not a regular file: not read",
            f"{folder / 'd.csv'}:0:-: no such file",
        ]
        (folder / "b.jsonl").unlink()
        (folder / "c.JSONL").unlink()
        (folder / "d.csv").unlink()
        assert [r.id for r in load_monbench(folder)] == ["m1"]


def test_image_paths_that_are_not_regular_files_are_row_problems(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    os.mkfifo(folder / "a.png")
    (folder / "b.png").mkdir()
    (folder / "c.png").write_bytes(RED)
    path = jsonl(
        folder / "visual.jsonl",
        [rair_row(id="v1", image="a.png"), rair_row(id="v2", image="b.png"), rair_row(id="v3", image="c.png")],
    )
    with fifo_watchdog(folder / "a.png"):
        assert problems_of(lambda: load_rair(path)) == [
            f"{path}:1:image: {folder / 'a.png'}: {FIFO}",
            f"{path}:2:image: {folder / 'b.png'}: a folder, not a regular file: not read",
        ]


def test_provenance_hashes_regular_files_only(tmp_path):
    fifo = tmp_path / "data.jsonl"
    os.mkfifo(fifo)
    with fifo_watchdog(fifo), pytest.raises(FileRefused, match=f"^{fifo}: a FIFO"):
        file_sha256(fifo)
    good = jsonl(tmp_path / "data" / "a.jsonl", [monbench_row()])
    assert content_sha256(good) == file_sha256(good) == hashlib.sha256(good.read_bytes()).hexdigest()
    os.mkfifo(tmp_path / "data" / "b.jsonl")
    with fifo_watchdog(tmp_path / "data" / "b.jsonl"):
        assert problems_of(lambda: content_sha256(tmp_path / "data")) == [
            f"{tmp_path / 'data' / 'b.jsonl'}:0:-: {FIFO}"
        ]


def test_rules_files_are_read_as_regular_strict_json_or_utf8_text(tmp_path):
    fifo = tmp_path / "rules.json"
    os.mkfifo(fifo)
    with fifo_watchdog(fifo):
        assert problems_of(lambda: load_rules(str(fifo))) == [f"{fifo}:0:-: {FIFO}"]
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 5000 + "]" * 5000, encoding="utf-8")
    assert problems_of(lambda: load_rules(str(deep))) == [f"{deep}:0:-: {DEEP}"]
    huge = tmp_path / "huge.json"
    huge.write_text('{\n  "version": ' + "7" * 5000 + "\n}\n", encoding="utf-8")
    assert problems_of(lambda: load_rules(str(huge))) == [f"{huge}:0:-: an integer of 5000 digits (more than 40)"]
    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "version": "x",\n  "rules": [,]\n}\n', encoding="utf-8")
    assert problems_of(lambda: load_rules(str(broken))) == [
        f"{broken}:3:-: not valid JSON: Expecting value (column 13)"
    ]
    latin = tmp_path / "rules.txt"
    latin.write_bytes("Règle 1\n".encode("latin-1"))
    assert problems_of(lambda: load_rules(str(latin))) == [f"{latin}:0:-: not UTF-8 text: byte 0xe8 at byte offset 1"]


# --- symlinks leading out of a data folder --------------------------------------------------------


def test_a_symlinked_sub_folder_is_never_walked_and_nothing_outside_is_named(tmp_path, victim):
    folder = tmp_path / "data"
    jsonl(folder / "a.jsonl", [monbench_row()])
    (folder / "images").symlink_to(victim, target_is_directory=True)
    (folder / "usr").symlink_to("/usr", target_is_directory=True)  # the case: walking it took minutes
    nested = jsonl(folder / "old" / "b.jsonl", [monbench_row(id="m0")])  # a real sub-folder: still named
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert [r.id for r in load_monbench(folder)] == ["m1"]
    skipped = [str(w.message) for w in caught if issubclass(w.category, SkippedFilesWarning)]
    assert skipped == [f"{nested}:0:-: not read: in a sub-folder of {folder} (give its own path to read it)"]
    proc = run_cli(["ecom-tasks", "validate", "monbench", str(folder)], timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "secret" not in proc.stdout + proc.stderr and str(victim) not in proc.stdout + proc.stderr
    assert "/usr/" not in proc.stdout + proc.stderr


def test_a_data_file_linked_out_of_the_folder_is_refused_and_one_linked_inside_is_read(tmp_path, victim):
    folder = tmp_path / "data"
    jsonl(folder / "a.jsonl", [monbench_row()])
    (folder / "b.jsonl").symlink_to(victim / "secret.jsonl")
    (folder / "c.jsonl").symlink_to("../outside/secret.jsonl")
    assert problems_of(lambda: load_monbench(folder)) == [
        f"{folder / 'b.jsonl'}:0:-: a symbolic link to {victim / 'secret.jsonl'}, outside {folder}: not read",
        f"{folder / 'c.jsonl'}:0:-: a symbolic link to {victim / 'secret.jsonl'}, outside {folder}: not read",
    ]
    (folder / "b.jsonl").unlink()
    (folder / "c.jsonl").unlink()
    jsonl(folder / "parts" / "c.jsonl", [monbench_row(id="m2")])
    (folder / "c.jsonl").symlink_to("parts/c.jsonl")  # stays inside: read like a file of the folder
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkippedFilesWarning)
        assert [r.id for r in load_monbench(folder)] == ["m1", "m2"]
    # A file the user names directly is theirs to name: a symlink given as the data is followed.
    assert [r.id for r in load_monbench(victim / "secret.jsonl")] == ["secret-1"]


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_a_data_file_swapped_for_a_link_out_while_it_is_opened_is_refused(tmp_path, victim, monkeypatch, suffix):
    """The race itself: the file in the folder is checked, then replaced by a link to a colleague's file at the
    moment it is opened. The opened file is checked again, so nothing outside is read, in every format."""
    import pandas

    folder = tmp_path / "data"
    folder.mkdir()
    secret, mine = victim / f"secret{suffix}", folder / f"a{suffix}"
    for path, row_id in ((secret, "secret-1"), (mine, "m1")):
        frame = pandas.DataFrame([monbench_row(id=row_id, choices=json.dumps(monbench_row()["choices"]))])
        if suffix == ".csv":
            frame.to_csv(path, index=False)
        elif suffix == ".parquet":
            frame.to_parquet(path)
        else:
            jsonl(path, [monbench_row(id=row_id)])
    swap_at_open(monkeypatch, mine, secret)
    found = problems_of(lambda: load_rows(folder))
    monkeypatch.undo()
    assert len(found) == 1 and found[0].startswith(f"{mine}:0:-: a symbolic link to {secret}"), found
    assert "secret-1" not in " ".join(found)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_table_file_is_read_once_through_the_checked_open_and_leaves_no_cache(tmp_path, monkeypatch, suffix):
    """CSV and Parquet files are parsed from the bytes of the one checked open: no second open by name that a
    swapped file could answer, and nothing written into the Hugging Face cache."""
    import builtins

    import datasets
    import pandas

    path = tmp_path / f"a{suffix}"
    frame = pandas.DataFrame([{"id": "m1", "answer": 0, "note": None}, {"id": "m2", "answer": 3, "note": "x"}])
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path)
    cache = tmp_path / "hf-cache"
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache)
    real_open = builtins.open

    def no_open_by_name(file, *args, **kwargs):
        assert os.fspath(file) != os.fspath(path), "the data file was opened again by name"
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", no_open_by_name)
    rows = load_rows(path)
    monkeypatch.undo()
    assert [r.values for r in rows] == [{"id": "m1", "answer": 0, "note": None}, {"id": "m2", "answer": 3, "note": "x"}]
    assert not cache.exists() or not any(cache.rglob("*"))


# --- what a JSON line may hold --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "m2", "choices": ' + "[" * 5000 + "]" * 5000 + "}", DEEP),
        ('{"id": "m2", "x": ' + '{"a": ' * 5000 + "1" + "}" * 5000 + "}", DEEP),
        ('{"id": "m2", "answer": ' + "9" * 5000 + "}", "an integer of 5000 digits (more than 40)"),
        ('{"id": "m2", "answer": NaN}', "NaN where a number must be finite"),
        ('{"id": "m2", "answer": -Infinity}', "-Infinity where a number must be finite"),
        ("[" * 5000, DEEP),
    ],
    ids=["deep-list", "deep-object", "huge-int", "nan", "infinity", "unclosed-deep"],
)
def test_hostile_json_lines_are_file_line_problems_with_every_line_listed(tmp_path, line, message):
    path = tmp_path / "monbench.jsonl"
    good = json.dumps(monbench_row()) + "\n"
    path.write_text(good + line + "\n" + good.replace('"m1"', '"m3"') + "[1]\n", encoding="utf-8")
    expected = [f"{path}:2:-: {message}", f"{path}:4:-: a JSON line must be an object"]
    assert problems_of(lambda: load_rows(path)) == expected
    assert problems_of(lambda: load_monbench(path)) == expected


def test_csv_cells_holding_deep_json_are_field_problems(tmp_path):
    deep = "[" * 5000 + "]" * 5000
    monbench = tmp_path / "monbench.csv"
    monbench.write_text(f"id,task,split,question,choices,answer\nm1,product_co_purchase,test,q,{deep},0\n")
    assert problems_of(lambda: load_monbench(monbench)) == [f"{monbench}:1:choices: not a list (nor a JSON list)"]
    rair = tmp_path / "rair.csv"
    rair.write_text(f"id,subset,query,title,industry,label,rule_ids,language\nr1,general,q,t,Sports,L2,{deep},en\n")
    assert problems_of(lambda: load_rair(rair)) == [f"{rair}:1:rule_ids: not a list (nor a JSON list)"]
    ecomeval = tmp_path / "ecomeval.csv"
    ecomeval.write_text(f"id,category,task,language,question,reference,images\ne1,ecom_qa,t,en,q,r,{deep}\n")
    assert problems_of(lambda: load_ecomeval(ecomeval)) == [
        f"{ecomeval}:1:images: starts with '[' but is not a JSON list"
    ]


# --- empty files ----------------------------------------------------------------------------------


def test_an_empty_data_file_is_no_records_naming_it(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert problems_of(lambda: load_monbench(empty)) == [f"{empty}:0:-: no records: the file is empty"]
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n  \n\n", encoding="utf-8")
    assert problems_of(lambda: load_rows(blank)) == [f"{blank}:0:-: no records: the file holds no data rows"]
    csv_empty = tmp_path / "empty.csv"
    csv_empty.write_bytes(b"")
    assert problems_of(lambda: load_rows(csv_empty)) == [f"{csv_empty}:0:-: no records: the file is empty"]
    header_only = tmp_path / "header.csv"
    header_only.write_text("id,task,split,question,choices,answer\n", encoding="utf-8")
    assert problems_of(lambda: load_rows(header_only)) == [
        f"{header_only}:0:-: no records: the file holds no data rows"
    ]
    # In a folder: the empty file is named with every other file's reading problems (a truncated part).
    folder = tmp_path / "data"
    jsonl(folder / "a.jsonl", [monbench_row()])
    (folder / "b.jsonl").write_bytes(b"")
    (folder / "c.jsonl").write_text("{oops\n", encoding="utf-8")
    assert problems_of(lambda: load_monbench(folder)) == [
        f"{folder / 'b.jsonl'}:0:-: no records: the file is empty",
        f"{folder / 'c.jsonl'}:1:-: not valid JSON: Expecting property name enclosed in double quotes (column 2)",
    ]


# --- ecom-tasks validate: one short message, a non-zero exit, never a hang ------------------------


def _fifo(tmp: Path) -> Path:
    os.mkfifo(tmp / "data.jsonl")
    return tmp / "data.jsonl"


def _fifo_in_folder(tmp: Path) -> Path:
    jsonl(tmp / "data" / "a.jsonl", [monbench_row()])
    os.mkfifo(tmp / "data" / "b.jsonl")
    return tmp / "data"


def _device(tmp: Path) -> Path:
    (tmp / "data.jsonl").symlink_to("/dev/zero")
    return tmp / "data.jsonl"


def _linked_out(tmp: Path) -> Path:
    jsonl(tmp / "outside" / "secret.jsonl", [monbench_row(id="secret")])
    jsonl(tmp / "data" / "a.jsonl", [monbench_row()])
    (tmp / "data" / "b.jsonl").symlink_to(tmp / "outside" / "secret.jsonl")
    return tmp / "data"


def _text(text: str) -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        (tmp / "data.jsonl").write_text(text, encoding="utf-8")
        return tmp / "data.jsonl"

    return make


def _latin1(tmp: Path) -> Path:
    (tmp / "data.jsonl").write_bytes(json.dumps(monbench_row(question="café"), ensure_ascii=False).encode("latin-1"))
    return tmp / "data.jsonl"


def _empty_csv(tmp: Path) -> Path:
    (tmp / "data.csv").write_bytes(b"")
    return tmp / "data.csv"


VALIDATE_ATTACKS = {
    "fifo": (_fifo, "data.jsonl:0:-: " + FIFO),
    "fifo-in-folder": (_fifo_in_folder, "b.jsonl:0:-: " + FIFO),
    "device": (_device, "data.jsonl:0:-: a device, not a regular file: not read"),
    "linked-out-of-folder": (_linked_out, "b.jsonl:0:-: a symbolic link to "),
    "deep-nesting": (_text('{"id": ' + "[" * 5000 + "\n"), "data.jsonl:1:-: " + DEEP),
    "huge-integer": (_text('{"id": "m1", "answer": ' + "1" * 5000 + "}\n"), "data.jsonl:1:-: an integer of 5000"),
    "nan": (_text('{"id": "m1", "answer": NaN}\n'), "data.jsonl:1:-: NaN where a number must be finite"),
    "empty": (_text(""), "data.jsonl:0:-: no records: the file is empty"),
    "empty-csv": (_empty_csv, "data.csv:0:-: no records: the file is empty"),
    "non-utf8": (_latin1, "data.jsonl:1:-: not UTF-8 text: byte 0xe9 at byte offset"),
}


#: Every attack on MonBench; the other benchmarks read rows the same way, so a few rows show it for them.
VALIDATE_ROWS = [("monbench", attack) for attack in VALIDATE_ATTACKS] + [
    ("rair", "fifo"),
    ("rair", "deep-nesting"),
    ("ecomeval", "empty"),
    ("ecomeval", "linked-out-of-folder"),
]


@pytest.mark.parametrize(("benchmark", "attack"), VALIDATE_ROWS)
def test_validate_refuses_each_hostile_input_with_a_short_message_naming_the_file(tmp_path, attack, benchmark):
    make, expected = VALIDATE_ATTACKS[attack]
    data = make(tmp_path)
    proc = run_cli(["ecom-tasks", "validate", benchmark, str(data)], timeout=60)  # a hang fails here
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert any(line.startswith(str(tmp_path)) and expected in line for line in lines), proc.stderr
    assert lines[-1].startswith("INVALID: ") and lines[-1].endswith(str(data))
    assert len(lines) <= 3 and all(len(line) < 400 for line in lines)


# --- both frameworks' loaders ---------------------------------------------------------------------


def test_an_inspect_task_build_refuses_a_fifo_and_deep_json_with_one_line(tmp_path):
    from ecom_tasks.inspect_evals.rair import rair_hard

    fifo = _fifo(tmp_path)
    with fifo_watchdog(fifo), pytest.raises(DataValidationError) as info:
        rair_hard(data=str(fifo))
    assert str(info.value) == f"{fifo}:0:-: {FIFO}"
    (tmp_path / "x").mkdir()
    deep = _text('{"id": ' + "[" * 5000 + "\n")(tmp_path / "x")
    with pytest.raises(DataValidationError) as info:
        rair_hard(data=str(deep))
    assert str(info.value) == f"{deep}:1:-: {DEEP}"


def test_an_lm_eval_task_build_refuses_deep_json_and_a_fifo_with_one_line(tmp_path):
    import lm_eval

    from ecom_tasks.lm_eval_tasks import task_manager

    deep = _text('{"id": ' + "[" * 5000 + "\n")(tmp_path)
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    for data, expected in ((deep, f"{deep}:1:-: {DEEP}"), (fifo, f"{fifo}:0:-: {FIFO}")):
        with fifo_watchdog(fifo), pytest.raises(EcomTasksError) as info:
            lm_eval.simple_evaluate(
                model="ecom-baseline",
                tasks=["rair_hard"],
                task_manager=task_manager(include_defaults=False, metadata={"data": str(data)}),  # --metadata
                limit=1,
                bootstrap_iters=0,
            )
        assert str(info.value) == expected


@pytest.mark.slow
def test_inspect_and_lm_eval_commands_print_one_line_for_a_hostile_file(tmp_path):
    fifo = _fifo(tmp_path)
    proc = run_cli(
        ["inspect", "eval", "ecom_tasks/rair_hard", "-T", f"data={fifo}", "--model", "ecom/baseline"],
        env={"INSPECT_LOG_DIR": str(tmp_path / "logs")},
        timeout=120,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == f"ecom-tasks: {fifo}:0:-: {FIFO}"
    (tmp_path / "x").mkdir()
    deep = _text('{"id": ' + "[" * 5000 + "\n")(tmp_path / "x")
    proc = run_cli(
        [
            "ecom-lm-eval",
            "--model",
            "dummy",
            "--tasks",
            "rair_hard",
            "--metadata",
            json.dumps({"data": str(deep)}),
            "--limit",
            "1",
        ],
        timeout=180,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == f"ecom-tasks: {deep}:1:-: {DEEP}"
