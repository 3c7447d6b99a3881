"""LangChain on convmem (the ``langchain`` extra).

``ConvmemChatMessageHistory`` is a ``BaseChatMessageHistory`` on a convmem conversation: human,
AI (with tool calls), tool and system messages round-trip, so ``RunnableWithMessageHistory``
switches with one line::

    RunnableWithMessageHistory(chain, lambda sid: ConvmemChatMessageHistory(user.conversation(sid)))

``budgeted_context(conversation, model=…)`` stands where LangChain users put ``trim_messages``:
instead of cutting the list it is given, it builds the request from stored state within the
token budget — memories, the summary of evicted turns, the recent window, retrieved turns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from convmem.errors import BackendUnavailable

try:
    import langchain_core  # noqa: F401
except ImportError as exc:  # named, not a bare ModuleNotFoundError
    raise BackendUnavailable(
        "convmem.integrations.langchain needs the langchain extra: pip install 'convmem[langchain]'"
    ) from exc

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import (
    BaseMessage,
    HumanMessage,
    SystemMessage,
    convert_to_messages,
    convert_to_openai_messages,
)
from langchain_core.prompt_values import PromptValue
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda

from convmem.context.assemble import AssemblyOptions
from convmem.engine import Conversation
from convmem.errors import InvalidInput, InvalidMessage
from convmem.integrations.chat import append_chat, to_chat
from convmem.model.profile import ModelProfile


class ConvmemChatMessageHistory(BaseChatMessageHistory):
    """The active branch of a convmem conversation as LangChain messages."""

    def __init__(self, conversation: Conversation) -> None:
        super().__init__()
        self.conversation = conversation

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        return convert_to_messages([to_chat(m) for m in self.conversation.branch()])

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append under the active leaf, in order. Each message is its own write, so a refused
        one (an orphan tool result, say) leaves the ones before it stored."""
        for chat in convert_to_openai_messages(list(messages)):
            append_chat(self.conversation, chat)

    def clear(self) -> None:
        """Delete every message of the conversation, for real (the conversation stays)."""
        for message in self.conversation.messages():
            if message.parent_id is None:
                self.conversation.delete_message(message.id)


def budgeted_context(
    conversation: Conversation | Callable[[str], Conversation],
    *,
    model: ModelProfile | None = None,
    options: AssemblyOptions | None = None,
) -> Runnable[Any, list[BaseMessage]]:
    """A runnable for a chain's trimming step: from the prompt's messages it takes the leading
    system messages (the system prompt) and the final human message (the new turn), and returns
    convmem's assembled request for them as LangChain messages. The history in between is not
    read: the conversation's stored branch is the history.

    ``conversation`` may be a function of the session id, for a chain wrapped in
    ``RunnableWithMessageHistory`` (the id comes from ``config["configurable"]["session_id"]``).
    """

    def assemble(
        prompt: PromptValue | Sequence[BaseMessage], config: RunnableConfig
    ) -> list[BaseMessage]:
        messages = prompt.to_messages() if isinstance(prompt, PromptValue) else list(prompt)
        if not messages or not isinstance(messages[-1], HumanMessage):
            raise InvalidMessage("the prompt must end with the new human message")
        system = [m.text for m in _leading(messages, SystemMessage)]
        if isinstance(conversation, Conversation):
            target = conversation
        else:
            session = (config.get("configurable") or {}).get("session_id")
            if not isinstance(session, str):
                raise InvalidInput("no session_id in the run's configurable")
            target = conversation(session)
        assembled = target.assemble(
            messages[-1].text, model=model, format="openai", options=options,
            system="\n\n".join(system) if system else None,
        )  # fmt: skip
        return convert_to_messages(assembled.messages)

    return RunnableLambda(assemble, name="convmem_budgeted_context")


def _leading(messages: Sequence[BaseMessage], kind: type[BaseMessage]) -> list[BaseMessage]:
    lead: list[BaseMessage] = []
    for message in messages:
        if not isinstance(message, kind):
            break
        lead.append(message)
    return lead
