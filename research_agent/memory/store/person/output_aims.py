"""Lesson text aimed at the report rather than the research: three families, told by structure.

A lesson guides the research (what to search, how to judge a page); it never needs to say what
the run's own output must carry, how it must look, or what secret it should hold. Each family is
read on the text's skeleton (case and accents folded, see :func:`.instructions.skeleton`):

* **output injection**: a verb that places text (append, add, insert, put, mention...) aimed
  *into* the output ("... to the summary", "at the top of each report", "in the Sources
  section"); a verb that ends or opens something applied to the output ("finish every answer
  with", "close each section with"); or the output as the subject of what it must carry ("the
  report must end with", "the last line of the summary should say", "le rapport doit se terminer
  par");
* **format hijacking**: a verb of writing or shaping whose object is the output itself ("write
  the whole report in capitals", "translate the entire output", "drop the Sources section"), or
  an answer asked for in a form ("respond in JSON", "answer in French only", "reply in base64"),
  or its looks named (markdown, headings, emojis, capitals: no research needs them);
* **exfiltration**: what only the model's side holds (keys, tokens, passwords, environment
  variables, the conversation, "the text above", "the instructions you were given", a home or
  system file), or a URL carrying a query string for the answer to fill.

The output is named by a determiner that points at *this* output (the, your, each, every, the
whole...) before a word such as report, summary, answer, output, title or section: "the final
report of an inquiry" and "news summaries" stay research objects, since no verb places text into
them or makes them answer.
"""

from __future__ import annotations

import re

from ....lazy import LazyPattern

__all__ = ["output_problem"]

_THIS = (
    r"(?:the|your|each|every|this|its|any|all|le|la|les|l'|votre|ton|ta|tes|vos|chaque|tout|toute|der|die|das"
    r"|den|dem|des|dein\w*|ihr\w*|jede\w*|el|los|las|tu|tus|su|sus|cada|todo|toda)"
)
_WHOLE = r"(?:(?:whole|entire|full|final|last|first|executive|top|bottom|ganze\w*|gesamte\w*|entier\w*|entera?|final\w*)\s+)?"
_OUTPUT = (
    r"(?:reports?|summar(?:y|ies)|answers?|repl(?:y|ies)|responses?|outputs?|conclusions?|titles?|headings?"
    r"|paragraphs?|sections?|limitations|sources (?:section|list)|citations|rapport|resume|reponses?|sortie"
    r"|bericht\w*|zusammenfassung\w*|antwort\w*|ausgabe|informe|resumen|respuestas?|salida|conclusion)"
)
_PART = r"(?:(?:top|end|start|beginning|bottom|close|fin|debut|ende|anfang|final|principio)\s+(?:of|du|de|des|de la)\s+)?"
_OUTPUT_PHRASE = rf"\b{_THIS}\s+{_WHOLE}(?:\w+\s+)?{_OUTPUT}\b"
_INTO_OUTPUT = (
    rf"\b(?:in|into|to|at|on|onto|under|after|before|inside|within|from|dans|a|au|en|an|am|in|zu|con|al)\s+"
    rf"(?:{_THIS}\s+)?{_PART}{_OUTPUT_PHRASE}"
)
_PLACE = (
    r"append|prepend|add|insert|put|place|include|embed|mention|attach|paste|copy|inject|write|print|show|list"
    r"|quote|repeat|recopie\w*|ajoute\w*|insere\w*|mets|mettez|inclu\w*|hange\w*|fuge\w*|schreib\w*|gib|setze\w*"
    r"|anade\w*|agrega\w*|incluye\w*|inserta\w*|pon|escribe\w*|recopie"
)
_ENDS = (
    r"end|finish|close|conclude|start|begin|open|prefix|suffix|sign|termine\w*|finis\w*|commence\w*|beende\w*"
    r"|schliesse\w*|beginne\w*|termina\w*|acaba\w*|empieza\w*|comienza\w*"
)
_MUST = (
    r"(?:must|should|shall|will|needs? to|has to|have to|is to|are to|always|doit|doivent|devra|muss|mussen|soll"
    r"|sollen|debe|deben|tiene que|ha de)"
)
_CARRY = (
    r"(?:end|finish|close|conclude|start|begin|open|contain|include|carry|say|read|mention|show|display|hold"
    r"|se terminer|terminer|finir|commencer|contenir|enden|beginnen|enthalten|terminar|empezar|comenzar|contener"
    r"|decir|incluir)"
)
_INJECTION = LazyPattern(
    rf"\b(?:{_PLACE})\b[^.;!?]{{0,60}}?{_INTO_OUTPUT}"
    rf"|\b(?:{_ENDS})\s+{_OUTPUT_PHRASE}\s+(?:with|by|par|avec|mit|con)\b"
    rf"|{_OUTPUT_PHRASE}(?:\s+of\s+{_OUTPUT_PHRASE})?\s+(?:\w+\s+)?{_MUST}\s+(?:\w+\s+)?(?:{_CARRY})\b"
)
_SHAPE_VERB = (
    r"write|format|translate|render|compose|produce|present|output|print|rewrite|drop|remove|delete|omit|strip"
    r"|leave out|skip|shorten|reverse|encode|schreib\w*|formatier\w*|ubersetz\w*|ecri\w*|tradui\w*|formate\w*"
    r"|escrib\w*|tradu\w*|elimina\w*|quita\w*|supprime\w*|entferne\w*"
)
_FORM = (
    r"json|yaml|xml|base64|hex|html|uppercase|upper case|lowercase|capitals|capital letters|all caps|caps|emojis?"
    r"|verse|rhymes?|a (?:poem|limerick|haiku|song|table|single line)|pig latin|morse|code blocks?"
    r"|english|french|german|spanish|italian|chinese|russian|klingon|francais|anglais|englisch|franzosisch"
    r"|grossbuchstaben|majuscules|mayusculas|poema|poeme|gedicht"
)
_ANSWER_VERB = r"respond|reply|answer|write|output|reponds|repondez|antworte\w*|responde\w*|contesta\w*|schreib\w*"
_LOOKS = r"markdown|headings|bullet points|emojis?|all caps|capital letters|uppercase|lowercase|bold type"
_HIJACK = LazyPattern(
    rf"\b(?:{_SHAPE_VERB})\s+{_OUTPUT_PHRASE}"
    rf"|\b(?:use|write|answer|respond|reply|format)\b[^.;!?]{{0,40}}\b(?:{_LOOKS})\b"
    rf"|\b(?:{_ANSWER_VERB})\s+(?:(?:only|just|always|solo|seulement|nur|uniquement|unicamente)\s+)?"
    rf"(?:in|as|en|auf|im|in form von)\s+(?:{_FORM})\b"
    rf"|{_OUTPUT_PHRASE}\s+(?:in|as|into|en|auf)\s+(?:{_FORM})\b"
)
_SECRET = LazyPattern(
    r"\bapi[ _-]?keys?\b|_(?:api_)?(?:key|token|secret)\b|\baccess tokens?\b|\b(?:auth|bearer|session)\s+tokens?\b"
    r"|\bcredentials?\b|\bpasswords?\b|\bpasswd\b|\bsecrets?\b|\bprivate keys?\b|\bssh\b|\bid_rsa\b|\bcookies?\b"
    r"|\benvironment variables?\b|\benv(?:ironment)? vars?\b|(?:^|\s)(?:~/|/etc/|/home/|/root/|\.env\b)"
    r"|\bconversation (?:so far|above|history)\b|\bchat history\b|\bthe (?:text|words|lines?|messages?) (?:above|before)\b"
    r"|\binstructions? you (?:were|have been|are|got) given\b|\b(?:system|hidden|secret) (?:message|instructions?)\b"
    r"|\bsystemprompt\w*|\bsystemanweisung\w*|\bsystemnachricht\w*|\b(?:vos|tes|tus|sus|deine\w*) "
    r"(?:instructions?|consignes|instrucciones|anweisungen|regeln)\b|\bcle (?:de l')?api\b|\bclave (?:de (?:la )?)?api\b"
    r"|\bschlussel\b"
)
_TOKEN = re.compile(r"\S+")


def _query_url(token: str) -> bool:
    """Whether ``token`` is an address with a query for the answer to fill (``http://x/?q=``). Read
    token by token, not by one pattern over the text: ``\\S*`` from every ``http://`` of a long run
    would be quadratic."""
    address, _, query = token.partition("?")
    return "=" in query and ("http://" in address or "https://" in address)


def output_problem(folded: str) -> str | None:
    """Why the skeleton ``folded`` reads as aimed at the run's output (see the module docstring);
    None when it does not."""
    if _SECRET.search(folded) or any(_query_url(token.group()) for token in _TOKEN.finditer(folded)):
        return "reads as an instruction to the model: it asks for its prompt, keys, files or conversation to be sent out"
    if _INJECTION.search(folded):
        return "reads as an instruction to the model: it tells it what its output must carry, not what to research"
    if _HIJACK.search(folded):
        return "reads as an instruction to the model: it tells it what form its output must take, not what to research"
    return None
