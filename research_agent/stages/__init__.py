"""Pipeline stages: plain async functions that take a ChatModel and return frozen results.

decompose (the plan), relevance and gate (which sources count), skeptic and claim_check (the
attack on a draft), classify (a question's domain); the writer's stages, draft and revise, and
the reading of their markdown answers live in :mod:`.writing`.
"""
