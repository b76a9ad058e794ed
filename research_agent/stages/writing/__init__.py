"""The writer: the stages that answer in markdown, and how their answers are read.

* :mod:`.synthesize`  the draft and revise stages: their prompts, fitted to the model's window
* :mod:`.writer`      asking the writer: streamed, bounded, one shorter retry after a cut answer
* :mod:`.draft_text`  reading an answer into a :class:`~.draft_text.ReportDraft` (sections by
                      name, the prompt's echoes dropped, complete paragraphs or sentences kept)
* :mod:`.bounds`      how much of an answer is read: sections, paragraphs, words, characters
"""
