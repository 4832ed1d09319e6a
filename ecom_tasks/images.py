"""Images in benchmark rows: resolved to what a model or embedder takes, checked with pillow at load time.

Every benchmark with images (RAIR, EcomEval, RMIR) reads an image cell the same
way: a path relative to the data file (or absolute), a ``data:`` URI, an
http(s) URL (fetched by the provider, so it cannot be checked offline), a
``datasets`` Image feature (``{"bytes", "path"}``) or a decoded PIL image from
a hub dataset. A missing file or one pillow cannot decode fully is a
``file:row:field`` problem, reported with the row's other problems.
"""

from __future__ import annotations

import base64
import binascii
import io
from pathlib import Path
from typing import Any

from ecom_tasks.data import Problem, Row


def image_problem(data: bytes | Path) -> str | None:
    """None when pillow decodes the image fully, else why it cannot."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data) if isinstance(data, bytes) else data) as image:
            image.load()  # decode fully: a truncated file must fail here, not at the provider
    except (OSError, UnidentifiedImageError, ValueError, SyntaxError) as exc:
        return f"pillow cannot read it: {exc}"
    return None


def bytes_to_data_uri(raw: bytes) -> str:
    """A ``data:`` URI of encoded image bytes, with the MIME type pillow recognises (PNG if it cannot)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(raw)) as image:
            mime = Image.MIME.get(image.format or "", "image/png")
    except (OSError, UnidentifiedImageError):  # not checked (check=False) and unreadable
        mime = "image/png"
    return f"data:{mime};base64,{base64.b64encode(raw).decode('ascii')}"


def resolve_image(value: Any, row: Row, field: str, problems: list[Problem], *, check: bool) -> str | None:
    """``value`` (not blank) as an absolute path, data URI or URL; None plus a problem when it is bad.

    ``check``: open files and data URIs with pillow (missing or unreadable: a problem).
    """

    def problem(message: str) -> None:
        problems.append(Problem(row.source, row.index, field, message))

    if isinstance(value, dict):  # a datasets Image feature, not decoded
        raw = value.get("bytes")
        if isinstance(raw, (bytes, bytearray)):
            reason = image_problem(bytes(raw)) if check else None
            if reason:
                problem(reason)
                return None
            return bytes_to_data_uri(bytes(raw))
        if not value.get("path"):
            problem("image object has neither bytes nor path")
            return None
        value = str(value["path"])
    if hasattr(value, "save") and hasattr(value, "mode"):  # a decoded PIL image (hub datasets)
        buffer = io.BytesIO()
        value.save(buffer, format="PNG")
        return bytes_to_data_uri(buffer.getvalue())
    if not isinstance(value, str) or not value.strip():
        problem(f"must be a path, URL or data: URI, got {value!r}")
        return None
    value = value.strip()
    if value.startswith(("http://", "https://")):
        return value  # fetched by the provider; cannot be checked offline
    if value.startswith("data:"):
        if check:
            try:
                header, payload = value.split(",", 1)
                raw = base64.b64decode(payload, validate=True) if header.endswith(";base64") else payload.encode()
            except (ValueError, binascii.Error):
                problem("malformed data: URI")
                return None
            reason = image_problem(raw)
            if reason:
                problem(reason)
                return None
        return value
    path = Path(value).expanduser()
    if not path.is_absolute():
        if row.base_dir is None:
            problem(f"relative image path {value!r} but the data is not a local file to resolve it against")
            return None
        path = row.base_dir / path
    path = path.resolve()
    if check:
        if not path.is_file():
            problem(f"image file not found: {path}")
            return None
        reason = image_problem(path)
        if reason:
            problem(f"{path}: {reason}")
            return None
    return str(path)
