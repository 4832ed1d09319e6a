"""Images we read when they are sent (lm-eval's ``doc_to_image``, RMIR's embedders) go through our file checks
again: a file swapped after the data loaded (for a symlink to a colleague's file, a FIFO, a folder) is refused
by name, never followed or sent. (Inspect reads a Sample's image paths itself at sample start: docs/security.md.)"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

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


def test_urls_and_data_uris_pass_as_they_are() -> None:
    assert image_for_model("data:image/png;base64,AAAA") == "data:image/png;base64,AAAA"
    assert image_for_model("https://example.com/a.png") == "https://example.com/a.png"
