"""The OpenAI-compatible client: any chat-completions endpoint (OpenAI, Ollama, vLLM, llama.cpp, ...).

* ``openai_compat``  :class:`~.openai_compat.OpenAIEndpoint`, the :class:`~research_agent.llm.ChatEndpoint`
  built on the openai SDK, and :class:`~.openai_compat.OpenAIChatModel`, the checked model over it
* ``retry``          when a failed call is tried again (429, 5xx, connection errors), and how long to wait
* ``sdk``            one request through ``openai.AsyncOpenAI``: its answer, or the failure named
* ``transport``      the httpx client the SDK is given: time and connection limits, bounded bodies,
  no redirect to another origin
* ``answers``        a model's answer read off the wire: bounded, and named when it cannot be read
* ``streaming``      a plain-text answer streamed: what arrived, and how the stream ended;
  ``idle``  the limit on a stream that sends nothing for too long
* ``refusals``       what an endpoint's refusals and failures say
* ``window``, ``fitting``  the context window a server says, and requests fitted to it

Nothing is imported here; ``openai`` itself is imported in a thread when a model client is built
(:func:`.sdk.load_sdk_ahead`), so that it overlaps what a run does before its first call.
"""
