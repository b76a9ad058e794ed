"""The OpenAI-compatible client: any chat-completions endpoint (OpenAI, Ollama, vLLM, llama.cpp, ...).

* ``openai_compat``  :class:`~.openai_compat.OpenAIChatModel`, the :class:`~research_agent.llm.ChatModel`
  built on ``openai``
* ``retry``          when a failed call is tried again (429, 5xx, connection errors), and how long to wait
* ``answers``        a model's answer read off the wire: bounded, and named when it cannot be read
* ``streaming``      a plain-text answer streamed: what arrived, and how the stream ended;
  ``idle``  the limit on a stream that sends nothing for too long
* ``refusals``       what an endpoint's refusals and failures say, read from ``openai``'s errors

Nothing is imported here; ``openai`` itself only when a client is built.
"""
