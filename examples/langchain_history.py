"""LangChain's RunnableWithMessageHistory with its history in convmem, and convmem's budgeted
context where a chain would call trim_messages.

    python examples/langchain_history.py

The chat model is a stand-in (nothing is downloaded and no provider is called): it answers with
what it was sent, so the output shows the request convmem built.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

try:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
    from langchain_core.runnables import RunnableConfig
    from langchain_core.runnables.history import RunnableWithMessageHistory
except ModuleNotFoundError as missing:  # say which extra, not only which module
    raise SystemExit(
        f"this example needs the langchain extra: pip install -e '.[langchain]' ({missing})"
    ) from missing

import convmem
from convmem.integrations.langchain import ConvmemChatMessageHistory, budgeted_context


class EchoModel(BaseChatModel):
    """Replies with the roles it was sent and the last message: a model for examples."""

    @property
    def _llm_type(self) -> str:
        return "echo"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        roles = " ".join(m.type for m in messages)
        reply = AIMessage(f"[{roles}] you said: {messages[-1].text}")
        return ChatResult(generations=[ChatGeneration(message=reply)])


def main(db: str) -> None:
    with convmem.open(db) as mem:
        user = mem.scope(tenant="acme", user="alice")
        conversation = user.create_conversation(title="LangChain")
        prompt = ChatPromptTemplate.from_messages(
            [("system", "You are a travel assistant."), MessagesPlaceholder("history"),
             ("human", "{question}")]
        )  # fmt: skip
        model = convmem.ModelProfile(context_window=4096, max_output=512)
        chain = prompt | budgeted_context(user.conversation, model=model) | EchoModel()
        chat = RunnableWithMessageHistory(
            chain,
            lambda session_id: ConvmemChatMessageHistory(user.conversation(session_id)),
            input_messages_key="question",
            history_messages_key="history",
        )
        session: RunnableConfig = {"configurable": {"session_id": conversation.id}}
        for question in ["Remember that I prefer aisle seats.", "Which seat should I book?"]:
            print(chat.invoke({"question": question}, config=session).text)
        stored = ConvmemChatMessageHistory(conversation).messages
        print("stored in convmem:", [m.type for m in stored])
        print("memories:", [m.text for m in user.memories.list()])


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        main(os.path.join(folder, "langchain.db"))
