"""The built-in world: a fictional region of firms, towns, people and landmarks, generated from a seed.

:func:`write_world` writes it into a folder (``pages/`` and ``questions.yaml``) as any world is
written, so that ``research-agent eval run`` reads it like a world of the user's own. The same
seed gives the same world byte for byte; another seed gives other names, numbers and questions
of the same kinds:

* ``single``: a fact on one page (a founding year, a founder, a product, a river);
* ``two_hop``: the page that answers names the page that holds the fact (a founder's birth year,
  the population of the town a landmark stands in);
* ``superseded``: a later page moved a firm's headquarters (the old town is the superseded value);
* ``distractor``: a firm with a near-identical name holds different numbers;
* ``number``: numbers with units and thousands separators (lengths, heights, populations);
* ``comparison``: two entities compared (founding years, heights);
* ``unanswerable``: one question no page answers (``answerable: false``).

Nothing in it exists, so no model can answer from memory: the facts must come from the pages.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...files.atomic import atomic_write_text
from ...files.safeyaml import dump_yaml
from .fiction import FIRM_KINDS, FORMATS, LANDMARK_KINDS, PRODUCTS, Names, Page, render, thousands
from .load import PAGES_DIR, QUESTIONS_FILE

__all__ = ["write_world", "generate", "builtin_name", "DEFAULT_SEED", "KINDS"]

DEFAULT_SEED = 42
KINDS = ("single", "two_hop", "superseded", "distractor", "number", "comparison", "unanswerable")
_COUNTS = {"single": (3, 5), "two_hop": (2, 4), "superseded": (2, 3), "distractor": (2, 3), "number": (2, 4),
           "comparison": (2, 3), "unanswerable": (1, 1)}  # fmt: skip
_FIRM_FILLER = (
    "Its workshops are arranged around a courtyard that once served as a coaching inn.",
    "Most of its orders come from customers in the neighbouring provinces.",
    "The firm keeps an archive of drawings from its early years.",
    "Apprentices spend two years in the workshops before they join a team.",
    "Visitors may tour the main hall on the first Saturday of each month.",
    "The company publishes a short newsletter for its suppliers every spring.",
)
_TOWN_FILLER = (
    "The old market square is lined with narrow merchant houses.",
    "A weekly market is held on the square every Thursday.",
    "The town library keeps maps of the surrounding farmland.",
    "Ferries once crossed the river where a footbridge now stands.",
)


def builtin_name(seed: int) -> str:
    """The name of the built-in world of ``seed`` (an eval's id starts with it)."""
    return f"builtin-{seed}"


@dataclass
class _Firm:
    name: str
    founded: int
    founder: str
    town: str
    product: str
    employees: int
    page: Page | None = None

    @property
    def site(self) -> Page:
        """Its page (one made with ``page=True``, as every question's firm is)."""
        assert self.page is not None, "a firm made with page=False"
        return self.page


@dataclass
class _Builder:
    """A world in the making: its pages, its questions, and the invented names in use."""

    rng: random.Random
    names: Names
    pages: list[Page] = field(default_factory=list)
    questions: list[dict[str, Any]] = field(default_factory=list)
    towns: list[str] = field(default_factory=list)

    def page(self, folder: str, title: str, paragraphs: list[str]) -> Page:
        page = Page(folder, title, paragraphs, self.rng.choice(FORMATS))
        taken = {p.path.rsplit(".", 1)[0] for p in self.pages}
        while page.path.rsplit(".", 1)[0] in taken:  # two trade fairs of one town and year
            page.title += " (continued)"
        self.pages.append(page)
        return page

    def town(self) -> str:
        """A town for a firm to stand in: a new one now and then, else one already named."""
        if len(self.towns) < 3 or self.rng.random() < 0.4:
            self.towns.append(self.names.place())
        return self.rng.choice(self.towns)

    def firm(self, name: str | None = None, *, page: bool = True, hq: str | None = None) -> _Firm:
        rng = self.rng
        firm = _Firm(name or f"{self.names.word(2)} {rng.choice(FIRM_KINDS)}", rng.randint(1852, 2004),
                     self.names.person(), hq or self.town(), rng.choice(PRODUCTS), rng.randint(120, 9800))  # fmt: skip
        if page:
            firm.page = self.page("firms", firm.name, _firm_paragraphs(firm, rng))
        return firm

    def ask(self, kind: str, question: str, checkpoints: list[dict[str, Any]], **extra: Any) -> None:
        ident = f"{kind.replace('_', '-')}-{len(self.questions) + 1}"
        entry: dict[str, Any] = {"id": ident, "kind": kind, "question": question}
        if checkpoints:
            entry["checkpoints"] = checkpoints
        entry.update(extra)
        self.questions.append(entry)


def _cp(ident: str, answer: str, pages: Page | list[Page], *aliases: str) -> dict[str, Any]:
    point: dict[str, Any] = {"id": ident, "answer": answer}
    if aliases:
        point["aliases"] = list(aliases)
    point["sources"] = [page.path for page in (pages if isinstance(pages, list) else [pages])]
    return point


def _firm_paragraphs(firm: _Firm, rng: random.Random, *, headquarters: str = "") -> list[str]:
    lead = (f"{firm.name} is a maker of {firm.product} based in {firm.town}. "
            f"The company was founded in {firm.founded} by {firm.founder}.")  # fmt: skip
    staff = f"Today {firm.name} employs {thousands(firm.employees)} people across its sites."
    filler = " ".join(rng.sample(_FIRM_FILLER, 2))
    return [lead, headquarters or staff, filler] if headquarters else [lead, staff, filler]


def _person_page(b: _Builder, person: str, born: int, firm: _Firm) -> Page:
    birthplace = b.town()
    return b.page("people", person, [
        f"{person} was born in {born} in the town of {birthplace}.",
        f"{person} founded {firm.name} in {firm.founded} and ran its first workshop.",
        f"{person} is remembered for a careful, patient way of training apprentices.",
    ])  # fmt: skip


def _town_page(b: _Builder, town: str, population: int) -> tuple[Page, str]:
    river = b.names.word(1 if b.rng.random() < 0.5 else 2)
    return b.page("towns", town, [
        f"{town} is a town on the {river} river.",
        f"{town} has a population of {thousands(population)} according to the latest count.",
        " ".join(b.rng.sample(_TOWN_FILLER, 2)),
    ]), river  # fmt: skip


def _landmark(b: _Builder, kinds: tuple[str, ...] = LANDMARK_KINDS) -> tuple[str, str, str, Page]:
    """A landmark: (name, town, its measure as written, page). Towers and lighthouses have a
    height in metres with a decimal; the others a length with a thousands separator."""
    kind, town = b.rng.choice(kinds), b.town()
    name = f"{b.names.word(2)} {kind}"
    if kind in ("Tower", "Lighthouse"):
        measure = f"{b.rng.randint(400, 3500) / 10:.1f} metres"
        fact = f"The {name} rises {measure} above the ground."
    else:
        measure = f"{thousands(b.rng.randint(1200, 24000))} metres"
        fact = f"The {name} is {measure} long."
    page = b.page("landmarks", name, [
        f"The {name} stands in {town}. It was completed in {b.rng.randint(1860, 2010)}.",
        fact,
        f"Local guides describe the {name} as the best known sight of the district.",
    ])  # fmt: skip
    return name, town, measure, page


def _metres_aliases(measure: str) -> tuple[str, ...]:
    number = measure.split()[0]
    return (f"{number} m", f"{number}m", f"{number.replace(',', '')} metres")


def _single(b: _Builder) -> None:
    firm = b.firm()
    choice = b.rng.randrange(4)
    if choice == 0:
        b.ask("single", f"In what year was {firm.name} founded?", [_cp("year", str(firm.founded), firm.site)])
    elif choice == 1:
        surname = firm.founder.split()[-1]
        b.ask("single", f"Who founded {firm.name}?", [_cp("founder", firm.founder, firm.site, surname)])
    elif choice == 2:
        b.ask("single", f"What does {firm.name} make?", [_cp("product", firm.product, firm.site)])
    else:
        town = b.names.place()
        page, river = _town_page(b, town, b.rng.randint(8000, 250000))
        b.ask("single", f"Which river flows through {town}?", [_cp("river", river, page)])


def _two_hop(b: _Builder) -> None:
    if b.rng.random() < 0.5:
        firm = b.firm()
        born = firm.founded - b.rng.randint(24, 50)
        person = _person_page(b, firm.founder, born, firm)
        b.ask("two_hop", f"In what year was the founder of {firm.name} born?",  # both pages name the founder
              [_cp("founder", firm.founder, [firm.site, person], firm.founder.split()[-1]), _cp("born", str(born), person)])
        return
    name, town, _, landmark = _landmark(b)
    population = b.rng.randint(8000, 250000)
    page = next((p for p in b.pages if p.folder == "towns" and p.title == town), None)
    page = page or _town_page(b, town, population)[0]
    written = next(s for s in page.paragraphs if "population of" in s).split("population of ")[1].split()[0]
    b.ask("two_hop", f"How many people live in the town where the {name} stands?",
          [_cp("town", town, landmark), _cp("population", written, page)])


def _superseded(b: _Builder) -> None:
    old, new = b.names.place(), b.names.place()
    firm = b.firm(page=False, hq=old)
    profile_year = b.rng.randint(2008, 2016)
    firm.page = b.page("firms", firm.name, _firm_paragraphs(firm, b.rng, headquarters=(
        f"According to its {profile_year} company profile, {firm.name} is headquartered in {old}.")))
    moved = b.rng.randint(profile_year + 2, 2024)
    news = b.page("news", f"{firm.name} moves its headquarters to {new}", [
        f"In {moved}, {firm.name} moved its headquarters from {old} to {new}.",
        "The old offices were closed after the move, and the works beside them were sold.",
        f"A spokesperson said the new site in {new} leaves room for a larger workshop.",
    ])  # fmt: skip
    b.ask("superseded", f"In which town is {firm.name} headquartered today?", [_cp("headquarters", new, news)],
          superseded=[{"answer": old, "by": new}])


def _distractor(b: _Builder) -> None:
    firm = b.firm()
    b.firm(b.names.near(firm.name))  # its near twin, with facts of its own
    if b.rng.random() < 0.5:
        b.ask("distractor", f"How many people does {firm.name} employ?",
              [_cp("employees", thousands(firm.employees), firm.site)])
    else:
        b.ask("distractor", f"In what year was {firm.name} founded?", [_cp("year", str(firm.founded), firm.site)])


def _number(b: _Builder) -> None:
    if b.rng.random() < 0.6:
        name, _, measure, page = _landmark(b)
        tall = name.endswith(("Tower", "Lighthouse"))
        b.ask("number", f"How {'tall' if tall else 'long'} is the {name}?",
              [_cp("height" if tall else "length", measure, page, *_metres_aliases(measure))])
        return
    town = b.names.place()
    population = b.rng.randint(12000, 480000)
    page, _ = _town_page(b, town, population)
    b.ask("number", f"What is the population of {town}?", [_cp("population", thousands(population), page)])


def _comparison(b: _Builder) -> None:
    if b.rng.random() < 0.5:
        one, two = b.firm(), b.firm()
        while two.founded == one.founded:
            two.founded += 1
            two.site.paragraphs = _firm_paragraphs(two, b.rng)
        b.ask("comparison", f"Which was founded earlier, {one.name} or {two.name}?",
              [_cp("first", str(one.founded), one.site), _cp("second", str(two.founded), two.site)])
        return
    (a, _, height_a, page_a), (c, _, height_c, page_c) = _landmark(b, ("Tower",)), _landmark(b, ("Lighthouse",))
    b.ask("comparison", f"Which is taller, the {a} or the {c}?",
          [_cp("first", height_a, page_a, *_metres_aliases(height_a)), _cp("second", height_c, page_c,
                                                                           *_metres_aliases(height_c))])


def _unanswerable(b: _Builder) -> None:
    firm = b.firm()
    b.ask("unanswerable", f"What was the annual revenue of {firm.name} in {b.rng.randint(2019, 2023)}?", [],
          answerable=False)


_MAKERS: dict[str, Callable[[_Builder], None]] = {
    "single": _single, "two_hop": _two_hop, "superseded": _superseded, "distractor": _distractor,
    "number": _number, "comparison": _comparison, "unanswerable": _unanswerable,
}  # fmt: skip


def _filler(b: _Builder, target: int) -> None:
    """Pages no question asks about, until the world has ``target`` pages: more firms, towns and
    people, and trade-fair notes that name several firms at once."""
    while len(b.pages) < target:
        roll = b.rng.random()
        if roll < 0.4:
            firm = b.firm()
            if b.rng.random() < 0.4:
                _person_page(b, firm.founder, firm.founded - b.rng.randint(24, 50), firm)
        elif roll < 0.65:
            _town_page(b, b.names.place(), b.rng.randint(8000, 250000))
        elif roll < 0.85:
            _landmark(b)
        else:
            firms = [b.firm(page=False) for _ in range(3)]
            town, year = b.town(), b.rng.randint(1990, 2024)
            b.page("notes", f"Trade fair in {town}, {year}", [
                f"The {year} trade fair in {town} drew exhibitors from across the region.",
                *(f"{f.name} showed its {f.product} on a stand near the entrance." for f in firms),
            ])  # fmt: skip


def generate(seed: int) -> tuple[dict[str, str], dict[str, Any]]:
    """The world of ``seed``: each page's content by its path under ``pages/``, and the content of
    ``questions.yaml`` (pure: nothing is written)."""
    rng = random.Random(seed)
    b = _Builder(rng, Names(rng))
    counts = {kind: rng.randint(*bounds) for kind, bounds in _COUNTS.items()}
    counts["single"] += max(0, 15 - sum(counts.values()))
    for turn in range(max(counts.values())):  # kinds in turn: any first few questions mix them
        for kind in KINDS:
            if turn < counts[kind]:
                _MAKERS[kind](b)
    least = max(45, len(b.pages) + 4)
    _filler(b, rng.randint(least, max(least, 70)))
    pages = {page.path: render(page) for page in b.pages}
    return pages, {"name": builtin_name(seed), "seed": seed, "description": (
        "A fictional region generated by research-agent: every name and number is invented."), "questions": b.questions}


_HEADER = """\
# A world generated by research-agent from seed {seed}: every firm, town, person and number is
# invented, so the facts must come from the pages. The same seed gives the same world.
"""


def write_world(folder: Path, seed: int = DEFAULT_SEED) -> Path:
    """Write the built-in world of ``seed`` into ``folder`` (created when missing): ``pages/`` and
    ``questions.yaml``, each file written atomically and only when its content differs (so the
    corpus index of an unchanged world stays as it is). Returns ``folder``."""
    folder = Path(folder)
    pages, questions = generate(seed)
    files = {f"{PAGES_DIR}/{path}": text for path, text in pages.items()}
    files[QUESTIONS_FILE] = _HEADER.format(seed=seed) + dump_yaml(questions)
    for rel, text in files.items():
        target = folder / rel
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(target, text)
    return folder
