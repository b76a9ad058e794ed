"""The OpenAI-compatible client: any chat-completions endpoint (OpenAI, Ollama, vLLM, llama.cpp, ...).

* ``openai_compat``  :class:`~.openai_compat.OpenAIChatModel`, the :class:`~research_agent.llm.ChatModel`
  over httpx
* ``retry``          when a failed call is tried again (429, 5xx, connection errors), and how long to wait
* ``answers``        a model's answer read off the wire: bounded, and named when it cannot be read
* ``streaming``      a plain-text answer streamed: what arrived, and how the stream ended;
  ``idle``  the limit on a stream that sends nothing for too long
* ``transport``      one request on the wire (httpx): its answer, or the failure named
* ``refusals``       what an endpoint's refusals and failures say

Nothing is imported here. The ``openai`` package is not used: a chat client needs one POST and the
meaning of its failures, which :mod:`.transport` gives without the SDK's second of imports.
"""
