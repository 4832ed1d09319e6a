"""A persistent cache of grader replies, so that grading the same outputs again makes no grader call and
an interrupted grading run resumes where it stopped.

Each grader call's reply is one JSON line appended (and fsynced) to
``replies.jsonl`` in the cache folder (default ``$ECOM_TASKS_CACHE/judge``,
``~/.cache/ecom_tasks/judge``) as soon as it arrives, keyed by the sha256 of
the grader, the prompt version, the output limit and the whole conversation
sent (the prompt text, and the earlier turns of a retry). Grading is at
temperature 0, so the same key means the same grade. A line cut short by a
killed process, or any line that is not a cache entry, is skipped when read.
Errors (a request that failed for good) are never cached.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ecom_tasks.scorers.judge import Ask, Message

FILE_NAME = "replies.jsonl"


def default_cache_dir() -> Path:
    """``$ECOM_TASKS_CACHE/judge`` (default ``~/.cache/ecom_tasks/judge``)."""
    root = os.environ.get("ECOM_TASKS_CACHE") or Path.home() / ".cache" / "ecom_tasks"
    return Path(root).expanduser() / "judge"


def cache_key(grader: str, version: str, max_tokens: int, messages: list[Message]) -> str:
    payload = json.dumps([grader, version, max_tokens, messages], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ReplyCache:
    """Grader replies by key, read from and appended to ``folder/replies.jsonl``."""

    def __init__(self, folder: str | os.PathLike[str] | None = None) -> None:
        self.folder = Path(folder) if folder is not None else default_cache_dir()
        self.path = self.folder / FILE_NAME
        self.entries: dict[str, tuple[str, str]] = {}
        self.hits = 0
        self.misses = 0
        if self.path.is_file():
            with self.path.open(encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    entry = _entry(line)
                    if entry is not None:
                        self.entries[entry[0]] = entry[1]

    def get(self, key: str) -> tuple[str, str] | None:
        return self.entries.get(key)

    def put(self, key: str, reply: str, reason: str, grader: str) -> None:
        self.entries[key] = (reply, reason)
        self.folder.mkdir(parents=True, exist_ok=True)
        line = (
            json.dumps({"key": key, "grader": grader, "reply": reply, "stop_reason": reason}, ensure_ascii=False) + "\n"
        )
        # One write per line with O_APPEND, then fsync: a kill leaves at most one partial last line.
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def wrap(self, ask: Ask, *, grader: str, version: str) -> Ask:
        """``ask`` answered from this cache when it holds the call, else asked and the reply stored."""

        async def cached(messages: list[Message], max_tokens: int) -> tuple[str, str]:
            key = cache_key(grader, version, max_tokens, messages)
            found = self.get(key)
            if found is not None:
                self.hits += 1
                return found
            self.misses += 1
            reply, reason = await ask(messages, max_tokens)
            self.put(key, reply, reason, grader)
            return reply, reason

        return cached


def _entry(line: str) -> tuple[str, tuple[str, str]] | None:
    try:
        value: Any = json.loads(line)
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("key"), str) or not isinstance(value.get("reply"), str):
        return None
    return value["key"], (value["reply"], str(value.get("stop_reason") or "stop"))
