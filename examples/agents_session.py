"""An OpenAI Agents SDK run whose history lives in convmem: ConvmemSession as the session.

    python examples/agents_session.py

The model is a stand-in (nothing is downloaded and no provider is called): on a question it
calls the agent's tool, then answers from the tool's result. The whole run — the user's
message, the function call, its output and the answer — is stored in a convmem conversation
as Responses items; ``pop_item`` then moves back a turn without destroying it.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import AsyncIterator
from typing import Any

try:
    from agents import Agent, Model, ModelResponse, RunConfig, Runner, Usage, function_tool
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )
except ModuleNotFoundError as missing:  # say which extra, not only which module
    raise SystemExit(
        f"this example needs the agents extra: pip install -e '.[agents]' ({missing})"
    ) from missing

import convmem
from convmem.integrations.agents import ConvmemSession


class ScriptedModel(Model):
    """Calls the first tool when the last input item is the user's; otherwise answers with the
    tool's output. Keeps the inputs it was sent."""

    def __init__(self) -> None:
        self.inputs: list[list[Any]] = []

    async def get_response(self, system_instructions: Any, input: Any, *args: Any,
                           **kwargs: Any) -> ModelResponse:  # fmt: skip
        items = [{"type": "message", "role": "user", "content": input}] if isinstance(
            input, str) else list(input)  # fmt: skip
        self.inputs.append(items)
        last = items[-1]
        output: Any
        if last.get("type") == "function_call_output":
            text = f"The forecast says: {last['output']}"
            output = ResponseOutputMessage(
                id=f"msg_{len(self.inputs)}", type="message", role="assistant",
                status="completed",
                content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
            )  # fmt: skip
        else:
            output = ResponseFunctionToolCall(
                type="function_call", call_id=f"call_{len(self.inputs)}", name="forecast",
                arguments='{"city": "Lisbon"}',
            )  # fmt: skip
        return ModelResponse(output=[output], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("this stand-in model does not stream")


@function_tool
def forecast(city: str) -> str:
    """The weather forecast for a city."""
    return f"sunny in {city}, 24 °C"


async def main(db: str) -> None:
    with convmem.open(db) as mem:
        user = mem.scope(tenant="acme", user="alice")
        conversation = user.create_conversation(title="Agents SDK")
        session = ConvmemSession(conversation)
        model = ScriptedModel()
        agent = Agent(name="assistant", instructions="Be brief.", model=model, tools=[forecast])
        run = RunConfig(tracing_disabled=True)
        result = await Runner.run(agent, "Weather in Lisbon?", session=session, run_config=run)
        print("final output:", result.final_output)
        print("items in convmem:", [i.get("role") or i["type"] for i in await session.get_items()])
        print("stored messages:", [m.role for m in conversation.branch()])
        popped = await session.pop_item()
        print("popped:", popped["type"] if popped else None, "| still in the tree:",
              len(conversation.messages()), "messages")  # fmt: skip
        result = await Runner.run(agent, "And in Porto?", session=session, run_config=run)
        off_branch = len(conversation.messages()) - len(conversation.branch())
        print("second run saw", len(model.inputs[-2]), "items;", off_branch, "messages off branch")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(main(os.path.join(folder, "agents.db")))
