"""A persistent cache of grader replies: one JSON line per reply appended (and fsynced) to
``replies.jsonl`` as it arrives, keyed by :func:`cache_key` (why and what goes into the key: EcomEval's
README, "Caching"). A line cut short by a killed process, or any line that is not a cache entry, is skipped
when read; errors are never cached; the file is read and appended only through ``ecom_tasks.files``.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

from ecom_tasks import files
from ecom_tasks.scorers.judge import GRADER_TEMPERATURE, Ask, Message

FILE_NAME = "replies.jsonl"
#: Bumped when the key's contents change, so older entries are never read under a new meaning.
KEY_VERSION = 2


def cache_key(
    grader: str,
    version: str,
    max_tokens: int,
    messages: list[Message],
    *,
    api_base: str | None = None,
    temperature: float = GRADER_TEMPERATURE,
) -> str:
    """The sha256 of everything that can change a grader's reply."""
    payload = json.dumps(
        {
            "key_version": KEY_VERSION,
            "grader": grader,
            "api_base": (api_base or "").rstrip("/"),
            "prompt_version": version,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "messages": messages,
        },
        ensure_ascii=False,
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ReplyCache:
    """Grader replies by key, read from and appended to ``folder/replies.jsonl`` (default folder:
    ``$ECOM_TASKS_CACHE/judge``, else ``~/.cache/ecom_tasks/judge``)."""

    def __init__(self, folder: str | os.PathLike[str] | None = None) -> None:
        root = os.environ.get("ECOM_TASKS_CACHE") or Path.home() / ".cache" / "ecom_tasks"
        self.folder = Path(folder if folder is not None else Path(root) / "judge").expanduser()
        try:
            self.output = files.OutputFolder(self.folder, what="judge reply cache folder")
        except files.FileRefused:
            raise
        except OSError as exc:  # e.g. a path below a file
            raise files.FileRefused(f"{self.folder}: cannot be the judge reply cache folder ({exc.strerror})") from None
        self.path = self.folder / FILE_NAME
        self.entries: dict[str, tuple[str, str]] = {}
        self.hits = 0
        self.misses = 0
        #: The file ends inside a line (a killed append): the next entry starts on a line of its own.
        self._open_line = False
        try:
            mode = self.path.lstat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            return
        if stat.S_ISLNK(mode):
            raise files.FileRefused(f"{self.path}: the judge reply cache is a symbolic link; not read or written")
        values, _unreadable = files.json_lines(
            self.path, max_bytes=files.MAX_LOG_INFLATED_BYTES
        )  # a FIFO or device is refused; bad lines are skipped
        for _line, value in values:  # a line that is not a cache entry is skipped
            if isinstance(value, dict) and isinstance(value.get("key"), str) and isinstance(value.get("reply"), str):
                self.entries[value["key"]] = (value["reply"], str(value.get("stop_reason") or "stop"))
        with files.open_regular(self.path) as handle:
            size = handle.seek(0, os.SEEK_END)
            if size:
                handle.seek(size - 1)
                self._open_line = handle.read(1) != b"\n"

    def check_writable(self) -> None:
        """Create the folder and open the cache file for appending (writing nothing): a cache that cannot
        be written is found before any grader call is paid for."""
        self.output.check_writable()
        self.output.append_text(FILE_NAME, "")

    def put(self, key: str, reply: str, reason: str, grader: str, api_base: str | None = None) -> None:
        self.entries[key] = (reply, reason)
        record = {"key": key, "grader": grader, "api_base": api_base, "reply": reply, "stop_reason": reason}
        # One write per line with O_APPEND, then fsync: a kill leaves at most one partial last line.
        line = files.dumps_strict(record, ensure_ascii=False) + "\n"
        self.output.append_text(FILE_NAME, ("\n" if self._open_line else "") + line)
        self._open_line = False

    def wrap(
        self,
        ask: Ask,
        *,
        grader: str,
        version: str,
        api_base: str | None = None,
        temperature: float = GRADER_TEMPERATURE,
    ) -> Ask:
        """``ask`` (``grader`` on ``api_base`` at ``temperature``) answered from this cache when it holds
        the call, else asked and the reply stored."""

        async def cached(messages: list[Message], max_tokens: int) -> tuple[str, str]:
            key = cache_key(grader, version, max_tokens, messages, api_base=api_base, temperature=temperature)
            found = self.entries.get(key)
            if found is not None:
                self.hits += 1
                return found
            self.misses += 1
            reply, reason = await ask(messages, max_tokens)
            self.put(key, reply, reason, grader, api_base)
            return reply, reason

        return cached
