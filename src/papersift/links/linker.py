"""Links from a paper to the earlier paper whose named artefact it uses, built day by day.

The papers are read in the order they were announced, one day at a time (papers of the same
day never link to each other). On each day:

1. a paper that coins a name (names.coined_names) starts an artefact, unless the name is old:
   in the stoplist (names many papers of earlier years used) or already used by more than
   `max_prior_refs` earlier papers that no artefact explains (GRPO, PPO);
2. a paper that mentions the name of an earlier artefact without defining it is linked to it
   when their meanings are close enough (cosine of the papers' unit vectors, plus a bonus for
   a shared category; closer for a risky name, one with other uses before). Where a name
   belongs to several artefacts (two "SPPO"s) the closest wins; when two are within
   `ambiguous_margin` the link is kept as ambiguous, not shown as a link. A paper that
   defines a name an earlier artefact holds names its own artefact: never a link.

The state after a run is what the next run starts from, so `update(state, new papers)` gives
exactly the links a full build over all papers would give for them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

import numpy as np

from papersift.links.names import Coined, clean, coined_names, mentioned_names


@dataclass(frozen=True)
class Paper:
    """What the linker reads of a paper."""

    id: str
    title: str
    abstract: str
    categories: tuple[str, ...]
    announced: str  # YYYY-MM-DD


@dataclass(frozen=True)
class Artefact:
    """A named method, dataset, benchmark or model, and the paper that coined it."""

    name: str
    origin: str
    day: str
    categories: tuple[str, ...]
    how: str  # title, intro or acronym
    # The name had other uses before (an older corpus, earlier papers here, or it is an English
    # word in capitals: SECOND, DATE): a mention needs a closer meaning to count.
    risky: bool = False

    @property
    def key(self) -> str:
        return f"{self.name}@{self.origin}"


@dataclass(frozen=True)
class Link:
    """`source` (a later paper) builds on or compares with `target`'s artefact `name`."""

    source: str
    target: str
    name: str
    day: str
    similarity: float
    status: str = "linked"  # or "ambiguous": shown as such, never as a link
    alternatives: tuple[str, ...] = ()  # the other origins an ambiguous link could mean


@dataclass(frozen=True)
class LinkParams:
    # all-MiniLM-L6-v2 cosines (plus category_bonus), read off the dev threads' follow-ups that
    # use the name (docs/links.md): genuine ones mostly 0.55-0.86, same-field collisions 0.3-0.57;
    # 0.55 keeps 31 of the 33 judged genuine, 0.60 29.
    min_similarity: float = 0.55
    risky_similarity: float = 0.65
    category_bonus: float = 0.05
    ambiguous_margin: float = 0.03
    # Earlier papers of the corpus that used a name no artefact explains, at most, for a paper
    # that says "we introduce NAME" / titles "NAME: ..." to coin it.
    max_prior_refs: int = 1
    max_prior_refs_title: int = 3
    # Papers of an older corpus (old_names) that used a name, from which it is old.
    old_min_papers: int = 3
    old_min_papers_title: int = 20
    # A lowercase word in this many older papers ("second", "date"): its capitals are risky.
    word_min_papers: int = 20
    # More than this many papers using a new name within uptake_days of its origin: the name
    # was known before (a new artefact is rarely used by others within its first week).
    max_early_uptake: int = 3
    uptake_days: int = 7


@dataclass
class LinkState:
    """Everything the next day's run needs: artefacts with their origins' vectors, and how many
    papers used each name that no artefact explains."""

    artefacts: dict[str, list[Artefact]] = field(default_factory=dict)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # by artefact key, as fetched
    refs: dict[str, int] = field(default_factory=dict)
    young: dict[str, int] = field(default_factory=dict)  # uses of artefacts in their first days
    old: set[str] = field(default_factory=set)  # names withdrawn as known before their origin
    last_day: str = ""
    papers: int = 0


@dataclass
class LinkResult:
    artefacts: list[Artefact]
    links: list[Link]
    # Keys of artefacts (of this or an earlier run) withdrawn, with every link to them.
    retracted: list[str] = field(default_factory=list)


# How many papers of an older corpus used each name (stoplist.read_old_names).
OldNames = Mapping[str, int]
_NONE: OldNames = {}

# Unit vectors of papers by id (row i for ids[i]); asked only for the papers a decision needs:
# the store's embedding_vectors, an array lookup, or an embedder with a cache.
VectorSource = Callable[[Sequence[str]], np.ndarray]


def array_source(ids: Sequence[str], matrix: np.ndarray) -> VectorSource:
    """A VectorSource over an in-memory matrix (row i is the vector of ids[i])."""
    row = {pid: i for i, pid in enumerate(ids)}

    def vectors(wanted: Sequence[str]) -> np.ndarray:
        return matrix[[row[pid] for pid in wanted]]
    return vectors


@dataclass
class _Read:
    paper: Paper
    coined: list[Coined]
    mentions: set[str]
    vector: np.ndarray | None = None


def read_paper(paper: Paper) -> tuple[list[Coined], set[str]]:
    """The names a paper coins and the names it mentions (cleaned of LaTeX first)."""
    title, abstract = clean(paper.title), clean(paper.abstract)
    coined = [c for c in coined_names(title, abstract) if _coinable(c.name)]
    return coined, mentioned_names(title, abstract)


def _coinable(name: str) -> bool:
    # "GRPO-based" after "we propose a" is a use of GRPO, not a new name.
    head, _, tail = name.partition("-")
    return not (tail and tail.islower())


def update(state: LinkState, papers: Sequence[Paper], vectors: VectorSource,
           old_names: OldNames = _NONE, params: LinkParams = LinkParams(),
           read: Callable[[Paper], tuple[list[Coined], set[str]]] = read_paper) -> LinkResult:
    """Links and artefacts of `papers` given the state after every earlier paper; `state` is
    advanced in place. Papers announced on or before state.last_day are taken as a late part
    of that day's batch. `read` may be a cache of read_paper."""
    by_day: dict[str, list[int]] = defaultdict(list)
    for i, paper in enumerate(papers):
        by_day[paper.announced].append(i)
    result = LinkResult([], [], [])
    for day in sorted(by_day):
        rows = sorted(by_day[day], key=lambda i: papers[i].id)
        items = [_Read(papers[i], *read(papers[i])) for i in rows]
        _fetch_vectors(state, items, vectors)
        _run_day(state, items, old_names, params, result)
        state.last_day = max(state.last_day, day)
        state.papers += len(rows)
    return result


def build(papers: Sequence[Paper], vectors: VectorSource, old_names: OldNames = _NONE,
          params: LinkParams = LinkParams(),
          read: Callable[[Paper], tuple[list[Coined], set[str]]] = read_paper
          ) -> tuple[LinkState, LinkResult]:
    """Every artefact and link of a corpus, from an empty state."""
    state = LinkState()
    return state, update(state, papers, vectors, old_names, params, read)


def _fetch_vectors(state: LinkState, items: list[_Read], vectors: VectorSource) -> None:
    """One call for the day: the vectors of papers that mention or coin a name some earlier
    artefact holds, and of those artefacts' origins not fetched before."""
    need = [item for item in items
            if any(name in state.artefacts for name in item.mentions)
            or any(c.name in state.artefacts for c in item.coined)]
    origins = sorted({a.key: a.origin for item in need
                      for name in item.mentions | {c.name for c in item.coined}
                      for a in state.artefacts.get(name, ())
                      if a.key not in state.vectors}.items())
    ids = [item.paper.id for item in need] + [origin for _, origin in origins]
    if not ids:
        return
    matrix = np.asarray(vectors(ids), dtype=np.float32)
    for i, item in enumerate(need):
        item.vector = matrix[i]
    for j, (key, _) in enumerate(origins):
        state.vectors[key] = matrix[len(need) + j]


def _run_day(state: LinkState, day: list[_Read], old_names: OldNames,
             params: LinkParams, result: LinkResult) -> None:
    """One day: links to artefacts of earlier days, then this day's new artefacts, then the
    unexplained uses of names counted (so a paper never links to one of its own day)."""
    # Names other papers of the same day use without defining them were known before the
    # paper that "coins" them (GRPO on the corpus's first day).
    used_today = Counter(name for item in day
                         for name in item.mentions | {c.name for c in item.coined})
    new: list[Artefact] = []
    unexplained: list[str] = []
    for item in day:
        coined = {c.name: c for c in item.coined}
        for name in sorted(item.mentions | set(coined)):
            link = _link(state, item, name, name in coined, params)
            if link is not None:
                result.links.append(link)
            elif name in coined:
                # Spelling out an acronym ("Group Relative Policy Optimization (GRPO)") is
                # what papers do for known names too: only a title or "we introduce" coins.
                how = coined[name].how
                if how != "acronym" and _new_name_ok(state, name, how, used_today[name] - 1,
                                                     old_names, params):
                    risky = bool(state.refs.get(name) or old_names.get(name)
                                 or old_names.get(name.lower(), 0) >= params.word_min_papers)
                    new.append(Artefact(name, item.paper.id, item.paper.announced,
                                        item.paper.categories, coined[name].how, risky))
            else:
                unexplained.append(name)
    _watch_uptake(state, day, used_today, params, result)
    for artefact in new:
        state.artefacts.setdefault(artefact.name, []).append(artefact)
        state.young[artefact.key] = 0
        result.artefacts.append(artefact)
    for name in unexplained:
        state.refs[name] = state.refs.get(name, 0) + 1


def _watch_uptake(state: LinkState, day: list[_Read], used_today: Counter[str],
                  params: LinkParams, result: LinkResult) -> None:
    """A name dozens of papers use in the week after its "origin" was known before it: the
    artefact is withdrawn with its links (result.retracted) and the name is old from now on."""
    today = day[0].paper.announced
    for key in list(state.young):
        name, _, origin = key.rpartition("@")
        artefact = next((a for a in state.artefacts.get(name, ()) if a.origin == origin), None)
        if artefact is None or _days_between(artefact.day, today) > params.uptake_days:
            state.young.pop(key, None)
            continue
        state.young[key] += used_today.get(name, 0) - (today == artefact.day)
        if state.young[key] > params.max_early_uptake:
            state.young.pop(key)
            state.artefacts[name] = [a for a in state.artefacts[name] if a.origin != origin]
            if not state.artefacts[name]:
                del state.artefacts[name]
            state.old.add(name)
            result.retracted.append(key)
            result.links[:] = [k for k in result.links if (k.name, k.target) != (name, origin)]


def _days_between(first: str, last: str) -> int:
    return (date.fromisoformat(last) - date.fromisoformat(first)).days


def _new_name_ok(state: LinkState, name: str, how: str, others_today: int,
                 old_names: OldNames, params: LinkParams) -> bool:
    """A title that opens with a name is a strong sign of a new artefact (a new "SEAL" though
    an older one exists): only names many older papers used, or this corpus used before,
    are refused. "We introduce X" is weaker evidence."""
    title = how == "title"
    if name in state.old or old_names.get(name, 0) >= (
            params.old_min_papers_title if title else params.old_min_papers):
        return False
    # Uses explained by no artefact: an old name (or a word) the corpus keeps using.
    return state.refs.get(name, 0) + others_today <= (
        params.max_prior_refs_title if title else params.max_prior_refs)


def _score(state: LinkState, item: _Read, artefact: Artefact, params: LinkParams) -> float:
    similarity = float(np.dot(state.vectors[artefact.key], item.vector))
    shared = set(artefact.categories) & set(item.paper.categories)
    return similarity + (params.category_bonus if shared else 0.0)


def _link(state: LinkState, item: _Read, name: str, coins: bool,
          params: LinkParams) -> Link | None:
    """The link from this paper to the artefact `name` means here, if any."""
    candidates = [a for a in state.artefacts.get(name, ()) if a.origin != item.paper.id]
    if coins or not candidates or item.vector is None:
        # A paper that defines the name again ("SEAL: ...", "we propose MARS (...)") names
        # its own artefact: sentence vectors of two safety papers are close (0.6-0.8) even
        # when their SEALs are different things.
        return None
    scored = sorted(((_score(state, item, a, params), a) for a in candidates),
                    key=lambda pair: -pair[0])
    best_score, best = scored[0]
    if best_score < _need(best, params):
        return None
    close = [a.origin for s, a in scored[1:]
             if s >= _need(a, params) and best_score - s < params.ambiguous_margin]
    status = "ambiguous" if close else "linked"
    return Link(item.paper.id, best.origin, name, item.paper.announced, round(best_score, 4),
                status, tuple(close))


def _need(artefact: Artefact, params: LinkParams) -> float:
    return params.risky_similarity if artefact.risky else params.min_similarity


def links_by_origin(links: Iterable[Link]) -> Mapping[str, list[Link]]:
    """The shown links ("linked", not ambiguous) of each origin, oldest follow-up first."""
    out: dict[str, list[Link]] = defaultdict(list)
    for link in sorted(links, key=lambda k: (k.day, k.source)):
        if link.status == "linked":
            out[link.target].append(link)
    return out
