"""RAIR's named variants, declared once: the lm-eval YAML is generated from here (README "Commands")."""

from __future__ import annotations

from dataclasses import dataclass

from ecom_tasks.rair.rules import BUILTIN, NONE

#: Task version of every RAIR task in both frameworks (Inspect ``Task.version``, lm-eval ``metadata.version``),
#: bumped when scores stop being comparable with earlier results. 1.1: final-answer parsing, per-group
#: Macro-F1 over present levels. 1.2: the level a reply asserts (contrasted, negated and hypothetical levels
#: are no answer; hedges and conflicting levels are a counted invalid, ``ambiguous``; level names map).
#: 1.3: a per-item outcome holds only the numbers epochs reduce; groups come from the item (scores unchanged).
#: 1.4: the careful reading reads more replies as a careful human does (lists of rejected levels, "nearly L4.
#: L3.", "L3 unless ..., in which case L4", checklists, "a solid L3 case", "Score: 3/4", "Relevance: 3 - Closely
#: Relevant"; a quoted definition, "L3 says ...", is none); the strict reading is unchanged.
#: 1.7: reluctance is no verdict ("It is hard to rate this a 4." names no level); a copy of the prompt with curled
#: quotes or dashes is an echo. 1.8: a correction offered tentatively ("L3. Actually, maybe L4.") is a hedge.
#: 1.9: so is a level offered tentatively after another ("L2. L3 might also fit."); a level called possible and
#: turned from is conceded ("L4 is possible, but L3 fits better." is L3); "L3 would be better" states L3.
TASK_VERSION = "1.9"

#: Output limit of every variant (Inspect ``max_tokens``, lm-eval ``max_gen_toks``); why None: README "Settings".
MAX_TOKENS = None


@dataclass(frozen=True)
class Variant:
    name: str
    subset: str
    rules: str  # none | builtin
    image: bool
    description: str

    @property
    def in_lm_eval(self) -> bool:
        return not self.image

    @property
    def inspect_task(self) -> tuple[str, dict[str, str]]:
        """The same setting in Inspect: its task and ``-T`` arguments (``rair_hard -T rules=builtin``)."""
        return self.name.removesuffix("_builtin_rules"), ({} if self.rules == NONE else {"rules": self.rules})


#: Each subset's tasks (without and with the built-in rules): name, subset, image shown, description.
_SETTINGS = (
    ("rair_general", "general", False, "General subset (industry-balanced; Table 5)"),
    ("rair_hard", "hard", False, "Hard subset (intents DJ ER SS QA NC MA; Table 5)"),
    ("rair_visual_text", "visual", False, "Visually Salient subset, text only (Table 4 w/o image)"),
    ("rair_visual", "visual", True, "Visually Salient subset, with the item image (Table 4 w/ image)"),
)
_RULES = (
    (NONE, "", "no rules (the paper's Base)"),
    (BUILTIN, "_builtin_rules", "our built-in rules document (not the paper's)"),
)
VARIANTS = {
    base + suffix: Variant(base + suffix, subset, rules, image, f"RAIR {what}; {how}")
    for base, subset, image, what in _SETTINGS
    for rules, suffix, how in _RULES
}

#: lm-eval groups: the base and rule-guided text tasks, never averaged together.
LM_EVAL_GROUPS = {
    "rair": [v.name for v in VARIANTS.values() if v.in_lm_eval and v.rules == NONE],
    "rair_builtin_rules": [v.name for v in VARIANTS.values() if v.in_lm_eval and v.rules == BUILTIN],
}
