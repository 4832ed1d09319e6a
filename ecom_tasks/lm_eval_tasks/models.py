"""lm-eval model ``ecom-baseline``: the offline baseline (each benchmark's ``baseline.py`` responder, through the plugin hook)."""

from __future__ import annotations

import json

from lm_eval.api.model import LM
from lm_eval.api.registry import register_model

from ecom_tasks.plugins import baseline_reply


@register_model("ecom-baseline")
class EcomBaselineLM(LM):
    """Answers generate_until requests; plain contexts and chat-templated ones alike."""

    # It takes EcomEval's multimodal requests (and answers from the text, as ecom/baseline does in Inspect).
    MULTIMODAL = True

    def __init__(self, **kwargs) -> None:
        super().__init__()

    @property
    def tokenizer_name(self) -> str:
        return "ecom-baseline"

    def apply_chat_template(self, chat_history: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
        # Keep the roles: the baseline reads the system and user turns apart.
        return json.dumps(chat_history, ensure_ascii=False)

    @staticmethod
    def _messages(context: str) -> list[tuple[str, str]]:
        try:
            turns = json.loads(context)
        except (json.JSONDecodeError, TypeError):
            return [("user", context)]
        if isinstance(turns, list) and all(isinstance(t, dict) and "content" in t for t in turns):
            return [(t.get("role", "user"), str(t["content"])) for t in turns]
        return [("user", context)]

    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        replies = []
        for request in requests:
            replies.append(baseline_reply(self._messages(request.args[0])))
            self.cache_hook.add_partial("generate_until", request.args, replies[-1])
        return replies

    def loglikelihood(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError("ecom-baseline only answers generate_until tasks (all ecom-tasks tasks are)")

    loglikelihood_rolling = loglikelihood
