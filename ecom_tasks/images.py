"""Images in benchmark rows: resolved to what a model or embedder takes, checked with pillow at load time.

Every benchmark with images (RAIR, EcomEval, RMIR) reads an image cell the same
way: a path relative to the data file, a ``data:`` URI, an http(s) URL, a
``datasets`` Image feature (``{"bytes", "path"}``) or a decoded PIL image from
a hub dataset. A missing file or one pillow cannot decode fully is a
``file:row:field`` problem, reported with the row's other problems.

What a dataset may make us read (:class:`ImageAccess`): by default only files
inside the data file's own folder. A path that leaves it (``../``, an absolute
path, a symlink pointing out) and an http(s) URL are refused unless the user
allows them (``allow_outside_images`` / ``allow_url_images``). An allowed URL
is fetched here, at load time, with a size cap and a Content-Type check, and
sent on as a ``data:`` URI, so a dead link is a load-time problem like a
missing file, never a failure in the middle of a run. Every image opened with
pillow is capped at :data:`MAX_IMAGE_PIXELS` (a decompression bomb is a problem,
not a crash). Image files are opened as ``files.py`` opens files: a FIFO, socket,
device or folder at an image path is a problem naming it, never a hang.
"""

from __future__ import annotations

import base64
import binascii
import io
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ecom_tasks import files
from ecom_tasks.data import Problem, Row, parse_flag

#: Pixel cap for every image we open: pillow's default limit (about 89.5 million pixels, e.g.
#: 9459 x 9459), made a hard error (pillow only warns between 1x and 2x of it).
MAX_IMAGE_PIXELS = 89_478_485
#: An allowed URL image: at most this many bytes, fetched within this many seconds, Content-Type image/*.
MAX_URL_IMAGE_BYTES = 20 * 1024 * 1024
URL_TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True)
class ImageAccess:
    """Which image references beyond files inside the dataset's own folder a load may follow."""

    outside: bool = False  # paths outside the data file's folder (absolute, ../, symlinks out)
    urls: bool = False  # http(s) URLs, fetched by us at load time

    @classmethod
    def from_options(
        cls, allow_outside_images: bool | str | None = False, allow_url_images: bool | str | None = False
    ) -> ImageAccess:
        """From the user's settings (``-T allow_outside_images=true``, lm-eval metadata, CLI flags)."""
        return cls(
            outside=parse_flag(allow_outside_images, "allow_outside_images"),
            urls=parse_flag(allow_url_images, "allow_url_images"),
        )


#: Only files inside the dataset's folder, no URLs.
DEFAULT_ACCESS = ImageAccess()

OUTSIDE_REFUSED = "leaves the dataset's folder: refused (allow paths outside it with allow_outside_images=true)"
URL_REFUSED = "http(s) image URLs are refused (allow them with allow_url_images=true: fetched at load time, at most {cap} MB each)"


def image_problem(data: bytes | Path | IO[bytes]) -> str | None:
    """None when pillow decodes the image fully within :data:`MAX_IMAGE_PIXELS`, else why it cannot.

    A path is opened with :func:`ecom_tasks.files.open_regular` (anything but a regular file: why not)."""
    if isinstance(data, Path):
        try:
            with files.open_regular(data) as handle:
                return image_problem(handle)
        except files.FileRefused as exc:
            return str(exc).removeprefix(f"{data}: ")
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            # Our own check below is the limit; pillow's warning between 1x and 2x of it is noise.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data) if isinstance(data, bytes) else data) as image:
                width, height = image.size
                if width * height > MAX_IMAGE_PIXELS:
                    return f"{width}x{height} pixels is over the limit of {MAX_IMAGE_PIXELS:,} pixels (a decompression bomb?)"
                image.load()  # decode fully: a truncated file must fail here, not at the provider
    except Image.DecompressionBombError as exc:  # pillow refuses at open, above 2x its own limit
        return f"over the limit of {MAX_IMAGE_PIXELS:,} pixels (a decompression bomb?): {exc}"
    except (OSError, UnidentifiedImageError, ValueError, SyntaxError) as exc:
        return f"pillow cannot read it: {exc}"
    return None


def bytes_to_data_uri(raw: bytes) -> str:
    """A ``data:`` URI of encoded image bytes, with the MIME type pillow recognises (PNG if it cannot)."""
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(raw)) as image:  # reads the header only
                mime = Image.MIME.get(image.format or "", "image/png")
    except Exception:  # not checked (check=False) and unreadable: the MIME type is only a label
        mime = "image/png"
    return f"data:{mime};base64,{base64.b64encode(raw).decode('ascii')}"


def fetch_url_image(url: str) -> tuple[bytes | None, str | None]:
    """``(bytes, None)`` of an http(s) image, or ``(None, why not)``: not 2xx, not ``image/*``, over
    :data:`MAX_URL_IMAGE_BYTES`, or unreachable within :data:`URL_TIMEOUT_SECONDS`."""
    import httpx

    try:
        with httpx.stream("GET", url, timeout=URL_TIMEOUT_SECONDS, follow_redirects=True) as response:
            if response.status_code != 200:
                return None, f"fetching {url} answered HTTP {response.status_code}"
            content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if not content_type.startswith("image/"):
                return None, f"{url} is not an image (Content-Type {content_type or 'missing'!r})"
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > MAX_URL_IMAGE_BYTES:
                return None, f"{url} is {int(declared):,} bytes, over the limit of {MAX_URL_IMAGE_BYTES:,}"
            chunks, size = [], 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > MAX_URL_IMAGE_BYTES:
                    return None, f"{url} is over the limit of {MAX_URL_IMAGE_BYTES:,} bytes"
                chunks.append(chunk)
    except httpx.HTTPError as exc:
        return None, f"fetching {url} failed: {exc}"
    return b"".join(chunks), None


def _inside_path(value: str, row: Row, access: ImageAccess, problem) -> Path | None:
    """The absolute path ``value`` names, relative to the data file's folder; None (and a problem) when it
    leaves that folder without ``access.outside``. Decided before the target is touched, with the same
    message whether it exists or not."""
    base = row.base_dir
    path = Path(value)
    if not path.is_absolute() and not value.startswith("~"):
        if base is None:
            problem(f"relative image path {value!r} but the data is not a local file to resolve it against")
            return None
        path = base / path
    try:
        resolved = path.expanduser().resolve()  # symlinks followed: one pointing out leaves the folder too
        inside = base is not None and resolved.is_relative_to(base.resolve())
    except (OSError, RuntimeError):  # a symlink loop, an unreadable folder on the way
        resolved, inside = path, False
    if not inside and not access.outside:
        problem(f"image path {value!r} {OUTSIDE_REFUSED}")
        return None
    return resolved


def resolve_image(
    value: Any, row: Row, field: str, problems: list[Problem], *, check: bool, access: ImageAccess = DEFAULT_ACCESS
) -> str | None:
    """``value`` (not blank) as an absolute path, data URI or URL; None plus a problem when it is bad.

    ``check``: open files, data URIs and (allowed) URLs with pillow (missing or unreadable: a problem);
    an allowed URL is then fetched and returned as a data URI. ``access``: what beyond the dataset's
    folder may be read (see :class:`ImageAccess`); refused references are problems whatever ``check``.
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
        if check and value.width * value.height > MAX_IMAGE_PIXELS:
            problem(f"{value.width}x{value.height} pixels is over the limit of {MAX_IMAGE_PIXELS:,} pixels")
            return None
        buffer = io.BytesIO()
        value.save(buffer, format="PNG")
        return bytes_to_data_uri(buffer.getvalue())
    if not isinstance(value, str) or not value.strip():
        problem(f"must be a path, URL or data: URI, got {value!r}")
        return None
    value = value.strip()
    if value.lower().startswith(("http://", "https://")):
        if not access.urls:
            problem(URL_REFUSED.format(cap=MAX_URL_IMAGE_BYTES // (1024 * 1024)))
            return None
        if not check:
            return value  # never opened nor sent by this run
        raw, reason = fetch_url_image(value)
        if raw is not None and not reason:
            reason = image_problem(raw)
        if reason or raw is None:  # fetch_url_image gives a reason whenever it gives no bytes
            problem(reason or f"fetching {value} gave no bytes")
            return None
        return bytes_to_data_uri(raw)
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
    path = _inside_path(value, row, access, problem)
    if path is None:
        return None
    if check:
        if not path.exists():
            problem(f"image file not found: {path}")
            return None
        reason = image_problem(path)  # a FIFO or folder there: refused by name, never opened blocking
        if reason:
            problem(f"{path}: {reason}")
            return None
    return str(path)
