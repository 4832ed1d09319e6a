"""lm-eval model ``ecom-chat-completions``: lm-eval's ``local-chat-completions`` with two fixes for real servers
(docs/running.md): a prompt over the server's context is a ``context_exceeded`` reply, not a retried and aborted
run; and no ``max_tokens`` is sent unless the user sets ``max_gen_toks``.
"""

from __future__ import annotations

import copy
from typing import Any

from lm_eval.api.registry import register_model
from lm_eval.models.api_models import LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER
from lm_eval.models.openai_completions import LocalChatCompletion

from ecom_tasks.scorers.context_limit import as_reply, context_exceeded

NAME = "ecom-chat-completions"
#: Generation settings that set the output limit (lm-eval's name and the API's).
_LIMIT_KEYS = ("max_gen_toks", "max_tokens")


def _refused_reply(status: int, text: str) -> str | None:
    if status not in (400, 413):
        return None
    found = context_exceeded(text)
    return None if found is None else as_reply(found)


@register_model(NAME)
class EcomChatCompletions(LocalChatCompletion):
    """``local-chat-completions`` that counts a context overflow and leaves the output limit to the server."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.output_limit_given = any(key in kwargs for key in _LIMIT_KEYS)
        super().__init__(*args, **kwargs)

    def _create_payload(self, messages: Any, generate: bool = False, gen_kwargs: dict | None = None, **kwargs: Any):
        given = self.output_limit_given or any(key in (gen_kwargs or {}) for key in _LIMIT_KEYS)
        payload = super()._create_payload(messages, generate=generate, gen_kwargs=gen_kwargs, **kwargs)
        if generate and not given:
            payload.pop("max_tokens", None)  # the server's limit: what is left of its context
        return payload

    def model_call(self, messages: Any, *, generate: bool = True, gen_kwargs: dict | None = None, **kwargs: Any):
        """The synchronous path (``num_concurrent`` 1): a refused prompt is a marked reply, not a retry."""
        import requests

        try:
            return super().model_call(messages, generate=generate, gen_kwargs=gen_kwargs, **kwargs)
        except requests.HTTPError as exc:
            response = exc.response
            reply = _refused_reply(response.status_code, response.text) if generate and response is not None else None
            if reply is None:
                raise
            return {"choices": [{"index": 0, "message": {"role": "assistant", "content": reply}}]}

    async def amodel_call(
        self,
        session: Any,
        sem: Any,
        messages: Any,
        *,
        generate: bool = True,
        cache_keys: list | None = None,
        ctxlens: list[int] | None = None,
        gen_kwargs: dict | None = None,
        **kwargs: Any,
    ):
        """The concurrent path, as lm-eval's own (same request, same parsing and cache), except that a
        refused prompt is a marked reply: lm-eval reads no error body before it raises and retries."""
        if not generate:
            return await super().amodel_call(
                session, sem, messages, generate=generate, cache_keys=cache_keys, ctxlens=ctxlens, **kwargs
            )
        payload = self._create_payload(
            self.create_message(messages),
            generate=True,
            gen_kwargs=copy.deepcopy(gen_kwargs),
            seed=self._seed,
            **kwargs,
        )
        async with sem, session.post(self.base_url, json=payload, headers=self.header) as response:
            if not response.ok:
                text = await response.text()
                reply = _refused_reply(response.status, text)
                if reply is not None:
                    return [reply] * len(messages)  # never cached: a longer context answers it
                response.raise_for_status()
            outputs = await response.json()
        answers = [
            LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER if answer is None else answer
            for answer in self.parse_generations(outputs=outputs)
        ]
        for answer, key in zip(answers, cache_keys or (), strict=False):
            self.cache_hook.add_partial("generate_until", key, answer)
        return answers
