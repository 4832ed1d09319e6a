"""The RAIR rule system (levels, 16 intent dimensions, rules, severity priority; README "Settings", "Rules"): every rule
set has a ``version`` that runs record, so results trace to the exact rules shown."""

from __future__ import annotations

import functools
import hashlib
import os
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ecom_tasks import files
from ecom_tasks.data import ConfigurationError, DataValidationError, Problem, refusal
from ecom_tasks.rair.schema import DIMENSION_NAMES_ZH, DIMENSIONS, LANGUAGES, LEVELS, canonical_dimension

NONE = "none"
BUILTIN = "builtin"
BUILTIN_FILE = "rules_v1.json"

#: The headings of a rendered rule set: title, levels, severity, dimensions, rules.
_HEADINGS = {
    "en": "Relevance rules|Levels|Severity priority|Intent dimensions|Rules (id [level, dimension]: condition)",
    "zh": "相关性规则|相关性等级|严重程度优先级|意图维度|规则（编号 [等级, 维度]：条件）",
}


@dataclass(frozen=True)
class Rule:
    id: str
    dimension: str  # one of DIMENSIONS
    level: str  # one of LEVELS
    text: dict[str, str]  # by language


@dataclass(frozen=True)
class RuleSet:
    """A rule system: structured (from JSON) or a verbatim text document."""

    version: str
    source: str  # "builtin" or the file path
    # level -> name/definition -> lang -> text
    levels: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    severity: dict[str, str] = field(default_factory=dict)
    dimensions: dict[str, dict[str, str]] = field(default_factory=dict)  # dimension -> lang -> definition
    rules: tuple[Rule, ...] = ()
    verbatim: str | None = None
    sha256: str = ""  # of the file's bytes: results name exactly which rules were shown

    @functools.cached_property
    def _by_id(self) -> dict[str, Rule]:
        return {rule.id.casefold(): rule for rule in self.rules}

    def rule(self, rule_id: str) -> Rule | None:
        return self._by_id.get(rule_id.strip().casefold())

    def render(self, language: str) -> str:
        """The rules as prompt text (deterministic: same rule set and language, same bytes)."""
        if self.verbatim is not None:
            return self.verbatim
        title, levels, severity, dimensions, rules = _HEADINGS[language].split("|")
        lines = [f"{title} ({self.version})", "", f"{levels}:"]
        for level in reversed(LEVELS):  # L4 first, as the prompt's level list reads
            entry = self.levels[level]
            lines.append(f"- {level} ({entry['name'][language]}): {entry['definition'][language]}")
        lines += ["", f"{severity}: {self.severity[language]}", "", f"{dimensions}:"]
        for dimension in DIMENSIONS:
            if dimension in self.dimensions:
                name = dimension if language == "en" else f"{DIMENSION_NAMES_ZH[dimension]} ({dimension})"
                lines.append(f"- {name}: {self.dimensions[dimension][language]}")
        lines += ["", f"{rules}:"]
        for rule in self.rules:
            lines.append(f"- {rule.id} [{rule.level}, {rule.dimension}]: {rule.text[language]}")
        return "\n".join(lines)

    def resolve_level(self, rule_ids: tuple[str, ...] | list[str]) -> str | None:
        """The label the severity priority gives: the most severe level among the rules (``L4`` when none are given;
        None when some id is not in this rule set)."""
        levels = []
        for rule_id in rule_ids:
            rule = self.rule(rule_id)
            if rule is None:
                return None
            levels.append(rule.level)
        return min(levels, key=LEVELS.index) if levels else "L4"


def _structured_rules(raw: bytes, path: Path, source: str, version_suffix: str = "") -> RuleSet:
    """A structured rule set from a JSON file's bytes; lists every problem found (too deep, a huge integer or NaN is a
    file:line problem like a syntax error)."""
    doc = files.parse_json_document(files.decode_utf8(raw, str(path)), str(path))
    problems: list[Problem] = []
    if not isinstance(doc, dict):
        raise DataValidationError([Problem(source, 0, "-", "a rules JSON file must hold an object")])

    def problem(row: int, where: str, message: str) -> None:
        problems.append(Problem(source, row, where, message))

    def text(value: Any, where: str, row: int = 0) -> dict[str, str]:
        """A text field: one string for every language, or a ``{"en": ..., "zh": ...}`` mapping."""
        if isinstance(value, str) and value.strip():
            return {lang: value.strip() for lang in LANGUAGES}
        if isinstance(value, dict) and all(
            isinstance(value.get(lang), str) and value[lang].strip() for lang in LANGUAGES
        ):
            return {lang: value[lang].strip() for lang in LANGUAGES}
        problem(row, where, "needs a non-empty string or an object with non-empty 'en' and 'zh'")
        return {}

    version = doc.get("version")
    if not isinstance(version, str) or not version.strip():
        problem(0, "version", "missing or empty (runs record it)")
        version = ""
    levels: dict[str, dict[str, dict[str, str]]] = {}
    raw_levels = doc.get("levels")
    if not isinstance(raw_levels, dict) or set(raw_levels) != set(LEVELS):
        problem(0, "levels", f"needs exactly the keys {', '.join(LEVELS)}")
    else:
        for level in LEVELS:
            entry = raw_levels[level] if isinstance(raw_levels[level], dict) else {}
            levels[level] = {key: text(entry.get(key), f"levels.{level}.{key}") for key in ("name", "definition")}
    severity = text(doc.get("severity"), "severity")
    dimensions: dict[str, dict[str, str]] = {}
    raw_dims = doc.get("dimensions")
    if not isinstance(raw_dims, list):
        problem(0, "dimensions", "must be a list")
        raw_dims = []
    for i, entry in enumerate(raw_dims, start=1):
        name = entry.get("name") if isinstance(entry, dict) else None
        if name not in DIMENSIONS:
            problem(i, "dimensions.name", f"{name!r} is not one of the 16 dimensions ({', '.join(DIMENSIONS)})")
            continue
        dimensions[name] = text(entry.get("definition"), "dimensions.definition", i)
    rules: list[Rule] = []
    seen: set[str] = set()
    raw_rules = doc.get("rules")
    if not isinstance(raw_rules, list) or not raw_rules:
        problem(0, "rules", "must be a non-empty list")
        raw_rules = []
    for i, entry in enumerate(raw_rules, start=1):
        entry = entry if isinstance(entry, dict) else {}
        rule_id = entry.get("id")
        if not isinstance(rule_id, str) or not rule_id.strip():
            problem(i, "rules.id", "missing or empty")
            continue
        if rule_id.casefold() in seen:
            problem(i, "rules.id", f"duplicate rule id {rule_id!r}")
        seen.add(rule_id.casefold())
        dimension, rule_level = entry.get("dimension"), entry.get("level")
        if dimension not in DIMENSIONS:
            problem(i, "rules.dimension", f"{dimension!r} is not one of the 16 dimensions")
        if rule_level not in LEVELS:
            problem(i, "rules.level", f"{rule_level!r} is not one of {', '.join(LEVELS)}")
        rules.append(Rule(rule_id.strip(), str(dimension), str(rule_level), text(entry.get("text"), "rules.text", i)))
    if problems:
        raise DataValidationError(problems)
    return RuleSet(
        version=version.strip() + version_suffix,
        source=source,
        levels=levels,
        severity=severity,
        dimensions=dimensions,
        rules=tuple(rules),
        sha256=hashlib.sha256(raw).hexdigest(),
    )


@functools.cache
def builtin_rules() -> RuleSet:
    path = Path(str(resources.files("ecom_tasks") / "rair" / BUILTIN_FILE))
    return _structured_rules(files.read_bytes(path), path, BUILTIN)


# lm-eval builds a RAIR task (which records the rules' provenance) and its documents (which show
# them) apart: one read per file version serves both. An edited file has a new mtime/size key.
@functools.lru_cache(maxsize=8)
def _parse_file(path: Path, mtime_ns: int, size: int) -> RuleSet:
    try:
        raw = files.read_bytes(path)
    except files.FileRefused as exc:  # replaced by a FIFO since it was checked
        raise DataValidationError([refusal(path, exc)]) from None
    full_digest = hashlib.sha256(raw).hexdigest()
    if path.suffix.lower() == ".json":
        return _structured_rules(raw, path, str(path), version_suffix=f" (sha256:{full_digest[:12]})")
    text = files.decode_utf8(raw, str(path))
    if not text.strip():
        raise DataValidationError([Problem(str(path), 0, "rules", "rules file is empty")])
    return RuleSet(
        version=f"{path.name} (sha256:{full_digest[:12]})", source=str(path), verbatim=text.strip(), sha256=full_digest
    )


def load_rules(spec: str | os.PathLike[str] | None) -> RuleSet | None:
    """``none``/``false``/None -> no rules; ``builtin``/``true`` -> rules_v1.json; otherwise a file path."""
    accepted = "none, builtin or a rules file"
    if not isinstance(spec, str | os.PathLike | bool | None):  # -T rules=true arrives as a bool; a list is a mistake
        raise ConfigurationError(f"rules must be {accepted}, got {spec!r:.80}")
    if spec is None or str(spec).strip().lower() in ("", NONE, "false"):
        return None
    if str(spec).strip().lower() in (BUILTIN, "true"):
        return builtin_rules()
    path = Path(str(spec)).expanduser()
    try:
        found = path.exists()
    except OSError as exc:  # a value too long to be a file name (ENAMETOOLONG) or one we may not look at
        raise ConfigurationError(f"rules must be {accepted}, got {spec!r:.80} ({exc.strerror})") from None
    if not found:
        raise DataValidationError([Problem(str(path), 0, "rules", "rules file not found")])
    try:
        files.regular_file(path)  # a FIFO or device is refused by name, never read
    except files.FileRefused as exc:
        raise DataValidationError([refusal(path, exc)]) from None
    stat = path.stat()
    return _parse_file(path, stat.st_mtime_ns, stat.st_size)


def provenance(ruleset: RuleSet | None) -> dict[str, str]:
    """What a result records about the rules shown (README "Settings"): source, version, sha256 of the file."""
    if ruleset is None:
        return {"rules_source": NONE, "rules_version": NONE, "rules_sha256": ""}
    return {"rules_source": ruleset.source, "rules_version": ruleset.version, "rules_sha256": ruleset.sha256}


def _prefix_dimension(rule_id: str) -> str | None:
    """The dimension a rule id names by its prefix (``Brand-3`` -> Brand; README "Rules")."""
    head = re.split(r"[-_.:/ ]", rule_id.strip(), maxsplit=1)[0].rstrip("0123456789")
    return canonical_dimension(head) if head else None


def gold_dimension(rule_ids: tuple[str, ...] | list[str], ruleset: RuleSet | None = None) -> str | None:
    """The dimension of a record's most severe gold rule; a rule ``ruleset`` does not know is looked up in the built-in
    rules, then by its id's prefix (None when no rule id maps to a dimension)."""
    tables = [r for r in (ruleset, builtin_rules()) if r is not None and r.verbatim is None]
    found: list[tuple[int, int, str]] = []  # (severity rank, position, dimension)
    for position, rule_id in enumerate(rule_ids):
        rule = next(filter(None, (t.rule(rule_id) for t in tables)), None)
        if rule is not None:
            found.append((LEVELS.index(rule.level), position, rule.dimension))
        elif (dimension := _prefix_dimension(rule_id)) is not None:
            found.append((len(LEVELS), position, dimension))  # level unknown: after known ones
    return min(found)[2] if found else None
