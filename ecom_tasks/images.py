"""Image cells of benchmark rows, resolved to what a model or embedder takes and checked with pillow at load time;
a bad one is a ``file:row:field`` problem. What may be read, fetched and decoded: docs/security.md."""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import mimetypes
import os
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
#: An image file: at most this many bytes (an uncompressed image at the pixel cap is about 268 MB).
MAX_IMAGE_FILE_BYTES = 512 * 1024 * 1024


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
        outside = parse_flag(allow_outside_images, "allow_outside_images")
        return cls(outside=outside, urls=parse_flag(allow_url_images, "allow_url_images"))


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
                size = os.fstat(handle.fileno()).st_size
                if size > MAX_IMAGE_FILE_BYTES:
                    return f"{size:,} bytes is over the limit of {MAX_IMAGE_FILE_BYTES:,} bytes for an image file"
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


def _mime_type(raw: bytes) -> str:
    """The MIME type pillow recognises in encoded image bytes (PNG if it cannot)."""
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(raw)) as image:  # reads the header only
                return Image.MIME.get(image.format or "", "image/png")
    except Exception:  # not checked (check=False) and unreadable: the MIME type is only a label
        return "image/png"


def bytes_to_data_uri(raw: bytes) -> str:
    """A ``data:`` URI of encoded image bytes, with the MIME type pillow recognises (PNG if it cannot)."""
    return f"data:{_mime_type(raw)};base64,{base64.b64encode(raw).decode('ascii')}"


def file_image_bytes(ref: str) -> bytes:
    """The bytes of the image file ``ref`` (the resolved path the load checked), read and checked again when
    it is sent: a file swapped since the load for a symlink (to a colleague's key, say), a FIFO, a folder,
    something too large or no image is refused by name, never followed, read or sent."""
    path = Path(ref)
    real = files.real_path(path)
    if real != path:
        raise files.FileRefused(f"{ref}: became a symbolic link (to {real}) after the data loaded: not read")
    raw = files.read_bytes(path, max_bytes=MAX_IMAGE_FILE_BYTES, exact=True)  # a link planted since: refused
    problem = image_problem(raw)
    if problem:
        raise files.FileRefused(f"{ref}: {problem} (it changed after the data loaded)")
    return raw


def image_for_model(ref: str) -> str:
    """An image reference as a model is sent it: a ``data:`` URI or URL as it is, a file's checked bytes
    (:func:`file_image_bytes`) as a ``data:`` URI."""
    if ref.startswith("data:") or ref.lower().startswith(("http://", "https://")):
        return ref
    return bytes_to_data_uri(file_image_bytes(ref))


def image_for_inspect(ref: str) -> str:
    """An image reference as an Inspect Sample holds it: a file's checked bytes (:func:`file_image_bytes`) copied
    into this process's private folder (:func:`ecom_tasks.files.private_folder`), named by their sha256. Inspect
    opens a Sample's image paths itself when the sample starts, following symlinks; the copy is what was checked,
    whatever the data folder holds by then. A ``data:`` URI or URL as it is."""
    if ref.startswith("data:") or ref.lower().startswith(("http://", "https://")):
        return ref
    raw = file_image_bytes(ref)
    name = hashlib.sha256(raw).hexdigest() + (mimetypes.guess_extension(_mime_type(raw)) or "")
    folder = files.private_folder()
    if not folder.exists(name):
        folder.write_bytes(name, raw)
    return str(folder.path(name))


def data_uri_bytes(uri: str) -> bytes:
    """The bytes a ``data:`` URI holds (base64 or plain text); a ValueError when its base64 is malformed."""
    header, _, payload = uri.partition(",")
    try:
        return base64.b64decode(payload, validate=True) if header.endswith(";base64") else payload.encode()
    except binascii.Error:
        raise ValueError(f"malformed data: URI ({uri[:60]}...)") from None


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


class _Refused(Exception):
    """Why an image cell is refused (the message of its ``file:row:field`` problem)."""


def _refuse_if(reason: str | None) -> None:
    if reason:
        raise _Refused(reason)


def _inside_path(value: str, row: Row, access: ImageAccess) -> Path:
    """The absolute path ``value`` names, relative to the data file's folder; refused when it leaves that
    folder without ``access.outside`` (decided before the target is touched, same message whether it exists)."""
    base = row.base_dir
    path = Path(value)
    if not path.is_absolute() and not value.startswith("~"):
        if base is None:
            raise _Refused(f"relative image path {value!r} but the data is not a local file to resolve it against")
        path = base / path
    try:
        path = files.checked_path(path.expanduser())
    except files.FileRefused as refused:
        raise _Refused(f"image path {refused}") from None
    try:
        resolved = path.resolve()  # symlinks followed: one pointing out leaves the folder too
        inside = base is not None and resolved.is_relative_to(base.resolve())
    except (OSError, RuntimeError):  # a symlink loop, an unreadable folder on the way
        resolved, inside = path, False
    if not inside and not access.outside:
        raise _Refused(f"image path {value!r} {OUTSIDE_REFUSED}")
    return resolved


def resolve_image(
    value: Any, row: Row, field: str, problems: list[Problem], *, check: bool, access: ImageAccess = DEFAULT_ACCESS
) -> str | None:
    """``value`` (a path relative to the data file, a ``data:`` URI, an http(s) URL, a ``datasets`` Image feature
    or a PIL image) as an absolute path, data URI or URL; None plus a problem when it is bad or ``access`` refuses
    it. ``check``: decode it with pillow (an allowed URL is then fetched and returned as a data URI)."""
    try:
        return _resolve(value, row, check, access)
    except _Refused as refused:
        problems.append(Problem(row.source, row.index, field, str(refused)))
        return None


def _resolve(value: Any, row: Row, check: bool, access: ImageAccess) -> str:
    if isinstance(value, dict):  # a datasets Image feature, not decoded
        raw = value.get("bytes")
        if isinstance(raw, (bytes, bytearray)):
            _refuse_if(image_problem(bytes(raw)) if check else None)
            return bytes_to_data_uri(bytes(raw))
        if not value.get("path"):
            raise _Refused("image object has neither bytes nor path")
        value = str(value["path"])
    if hasattr(value, "save") and hasattr(value, "mode"):  # a decoded PIL image (hub datasets)
        if check and value.width * value.height > MAX_IMAGE_PIXELS:
            raise _Refused(f"{value.width}x{value.height} pixels is over the limit of {MAX_IMAGE_PIXELS:,} pixels")
        buffer = io.BytesIO()
        value.save(buffer, format="PNG")
        return bytes_to_data_uri(buffer.getvalue())
    if not isinstance(value, str) or not value.strip():
        raise _Refused(f"must be a path, URL or data: URI, got {value!r}")
    value = value.strip()
    if value.lower().startswith(("http://", "https://")):
        if not access.urls:
            raise _Refused(URL_REFUSED.format(cap=MAX_URL_IMAGE_BYTES // (1024 * 1024)))
        if not check:
            return value  # never opened nor sent by this run
        raw, reason = fetch_url_image(value)
        _refuse_if(reason or (image_problem(raw) if raw is not None else f"fetching {value} gave no bytes"))
        assert raw is not None  # fetch_url_image gives a reason whenever it gives no bytes
        return bytes_to_data_uri(raw)
    if value.startswith("data:"):
        if check:
            try:
                raw = data_uri_bytes(value)
            except ValueError:
                raise _Refused("malformed data: URI") from None
            _refuse_if(image_problem(raw))
        return value
    path = _inside_path(value, row, access)
    if check:
        if not path.exists():
            raise _Refused(f"image file not found: {path}")
        reason = image_problem(path)  # a FIFO or folder there: refused by name, never opened blocking
        _refuse_if(reason and f"{path}: {reason}")
    return str(path)
