"""Images we read when they are sent (lm-eval's ``doc_to_image``, RMIR's embedders) go through our file checks
again: a file swapped after the data loaded (for a symlink to a colleague's file, a FIFO, a folder) is refused
by name, never followed or sent. Inspect reads a Sample's image paths itself at sample start, so its Samples name
our private copy of the checked bytes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from PIL import Image

from ecom_tasks.data import fixtures_dir
from ecom_tasks.files import FileRefused
from ecom_tasks.images import file_image_bytes, image_for_model
from ecom_tasks.lm_eval_tasks.ecomeval.utils import doc_images
from ecom_tasks.rmir.embedders import load_pil


def _secret(tmp_path: Path) -> Path:
    """A colleague's private picture outside the data folder (a real image: only the path check can stop it)."""
    secret = tmp_path / "private" / "key.png"
    secret.parent.mkdir()
    shutil.copy(next((fixtures_dir("rair") / "images").iterdir()), secret)
    return secret


def test_lm_eval_doc_images_refuse_a_swapped_image(tmp_path: Path) -> None:
    image = tmp_path / "data" / "a.png"
    image.parent.mkdir()
    shutil.copy(next((fixtures_dir("rair") / "images").iterdir()), image)
    (opened,) = doc_images({"images": [str(image)]})
    assert opened.size[0] > 0
    secret = _secret(tmp_path)
    image.unlink()
    image.symlink_to(secret)
    with pytest.raises(FileRefused, match="became a symbolic link"):
        doc_images({"images": [str(image)]})
    with pytest.raises(FileRefused, match="became a symbolic link"):  # what RMIR's embedders read and send
        load_pil(str(image))
    with pytest.raises(FileRefused, match="became a symbolic link"):
        image_for_model(str(image))


@pytest.mark.parametrize("swap", ["fifo", "folder", "not_an_image", "parent_symlink"])
def test_a_file_swapped_after_the_load_is_refused_without_blocking(swap: str, tmp_path: Path) -> None:
    folder = tmp_path / "data" / "images"
    folder.mkdir(parents=True)
    image = folder / "a.png"
    if swap == "fifo":
        os.mkfifo(image)
    elif swap == "folder":
        image.mkdir()
    elif swap == "not_an_image":
        image.write_text("#!/bin/sh\n")
    else:  # the folder above it replaced by a link to another folder holding an a.png
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        shutil.copy(next((fixtures_dir("rair") / "images").iterdir()), elsewhere / "a.png")
        folder.rmdir()
        folder.symlink_to(elsewhere)
    with pytest.raises(FileRefused, match=str(image)):
        file_image_bytes(str(image))
    with pytest.raises(FileRefused):
        image_for_model(str(image))


@pytest.mark.parametrize("swap", ["file", "parent"])
def test_a_link_planted_while_the_image_is_opened_is_refused(swap: str, tmp_path: Path, monkeypatch) -> None:
    """The race itself: the path checks out, then the file (or the folder above it) becomes a link to a
    colleague's picture at the moment it is opened; the opened file is checked again and refused."""
    folder = tmp_path / "data" / "images"
    folder.mkdir(parents=True)
    image = folder / "a.png"
    shutil.copy(next((fixtures_dir("rair") / "images").iterdir()), image)
    secret = _secret(tmp_path)
    real_open = os.open

    def swapping_open(path, *args, **kwargs):
        if os.fspath(path) == str(image) and not image.is_symlink() and not folder.is_symlink():
            if swap == "file":
                image.unlink()
                image.symlink_to(secret)
            else:
                shutil.rmtree(folder)
                folder.symlink_to(secret.parent)
                (secret.parent / "a.png").write_bytes(secret.read_bytes())
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", swapping_open)
    with pytest.raises(FileRefused, match="a symbolic link"):
        file_image_bytes(str(image))


def test_urls_and_data_uris_pass_as_they_are() -> None:
    assert image_for_model("data:image/png;base64,AAAA") == "data:image/png;base64,AAAA"
    assert image_for_model("https://example.com/a.png") == "https://example.com/a.png"


def _sent_image_bytes(log_dir: Path) -> list[bytes]:
    """The image bytes of every model call in the one log in ``log_dir`` (Inspect logs them as data URIs)."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    from ecom_tasks.images import data_uri_bytes

    (info,) = list_eval_logs(str(log_dir))
    log = read_eval_log(info, resolve_attachments=True)
    assert log.status == "success" and log.samples
    return [
        data_uri_bytes(part.image)
        for sample in log.samples
        for event in sample.events
        if event.event == "model"
        for message in event.input
        if isinstance(message.content, list)
        for part in message.content
        if part.type == "image"
    ]


def test_inspect_sends_the_checked_image_not_what_the_folder_holds_at_sample_start(tmp_path: Path) -> None:
    """The attack Inspect's own reader would follow: after the task loaded, a colleague swaps the dataset's
    image for a symlink to their private picture. Inspect opens a Sample's image paths itself at sample start;
    the Sample holds our private copy of the checked bytes, so the picture sent is the one that was checked."""
    from inspect_ai import eval as inspect_eval

    from ecom_tasks.inspect_evals.rair import rair_visual

    data = tmp_path / "data"
    shutil.copytree(fixtures_dir("rair"), data)
    task = rair_visual(data=str(data / "rair.jsonl"))
    checked = {path.name: path.read_bytes() for path in (data / "images").iterdir()}
    secret = tmp_path / "private" / "key.png"
    secret.parent.mkdir()
    Image.new("RGB", (8, 8), "purple").save(secret)  # a real image, none of the dataset's
    for name in checked:
        (data / "images" / name).unlink()
        (data / "images" / name).symlink_to(secret)
    inspect_eval(task, model="mockllm/model", log_dir=str(tmp_path / "logs"), display="none")
    sent = _sent_image_bytes(tmp_path / "logs")
    assert sent and all(raw != secret.read_bytes() for raw in sent)
    assert set(sent) <= set(checked.values())


def test_the_private_copies_are_in_a_folder_only_this_user_can_enter(tmp_path: Path) -> None:
    from ecom_tasks.files import private_folder
    from ecom_tasks.images import image_for_inspect

    image = tmp_path / "a.png"
    Image.new("RGB", (4, 4), "red").save(image)
    copy = Path(image_for_inspect(str(image)))
    assert copy.parent == private_folder().root and copy.read_bytes() == image.read_bytes()
    assert (copy.parent.stat().st_mode & 0o777) == 0o700
    assert image_for_inspect(str(image)) == str(copy)  # one copy per content
    assert image_for_inspect("data:image/png;base64,AAAA") == "data:image/png;base64,AAAA"
