"""Inspect model provider ``ecom``: ``--model ecom/baseline`` is the offline baseline."""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, ModelUsage, modelapi
from inspect_ai.tool import ToolChoice, ToolInfo

from ecom_tasks.errors import ConfigurationError
from ecom_tasks.plugins import baseline_reply

MODELS = ("baseline",)


class EcomBaselineAPI(ModelAPI):
    """Deterministic lexical-overlap baseline; reads the prompt text, ignores images."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008  (Inspect's ModelAPI signature; never mutated)
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_name not in MODELS:
            raise ConfigurationError(f"unknown ecom model {model_name!r}; available: {', '.join(MODELS)}")

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        messages = [(message.role, message.text) for message in input]
        reply = baseline_reply(messages)
        output = ModelOutput.from_content(model=f"ecom/{self.model_name}", content=reply)
        prompt, completion = sum(len(text.split()) for _, text in messages), len(reply.split())
        # Usage is given so Inspect needs no tokenizer (and no download) to count.
        output.usage = ModelUsage(input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion)
        return output


@modelapi(name="ecom")
def ecom() -> type[ModelAPI]:
    return EcomBaselineAPI
