"""Whether two records from any sources are one paper, and why: identifiers first, then title and authors.

Pure functions over PaperRecords (no store): `same_paper(a, b)` returns a Verdict whose
`reason` is the sentence a paper page shows ("bioRxiv says doi:10.1101/014852 was
published as doi:10.1002/ece3.2314"), and `candidate_keys(record)` the keys a store can
index to find the few records worth comparing with a new one.

The order of evidence:
1. an identifier both records carry (the same id, an arXiv paper's journal DOI, arXiv's own
   10.48550 DOI), or a link one asserts to the other (bioRxiv's `published`, Crossref's
   `relation` has-preprint / is-preprint-of / is-version-of ...): one paper;
2. identifiers that cannot both be one paper's (two arXiv ids, two DOIs of one registrant
   that neither links): two papers, whatever their titles say;
3. a comment, reply, erratum or retraction notice is never the paper it is about;
4. otherwise the normalized titles (markup, TeX, accents, dashes and case set aside) and the
   author lists (order, initials, "Family, G." against "Given Family"), with the abstracts
   (JATS or plain) as the tie-breaker when a title changed on the way to the journal.
"""

from __future__ import annotations

import contextlib
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from functools import lru_cache

from papersift.records import PaperRecord, normalize_doi, split_arxiv_id
from papersift.sources.markup import inline_text, to_text

# Relation kinds that make two records one work (Crossref's names; bioRxiv's `published`
# is read as is-preprint-of).
SAME_WORK = frozenset({"has-preprint", "is-preprint-of", "has-version", "is-version-of",
                       "is-identical-to", "has-manuscript", "is-manuscript-of"})
TITLE_SAME = 0.95  # normalized titles this alike are one title (a word's spelling, a typo)
TITLE_CLOSE = 0.80  # this alike: one title edited, if the abstracts agree too
AUTHORS_SAME = 0.5  # share of the shorter author list found in the other
ABSTRACT_SAME = 0.5  # share of the smaller abstract's words found in the other
_ARXIV_DOI = re.compile(r"^doi:10\.48550/arxiv\.(.+)$")
_RESPONSE = re.compile(
    r"^(?:(?:author|publisher|editorial) )?(?:comments?|reply|replies|response|rejoinder|"
    r"erratum|errata|corrigendum|correction|retraction|retracted|addendum|expression of concern|"
    r"retraction note|notice of retraction)\b")
_TEX_COMMAND = re.compile(r"\\[a-zA-Z]+\*?")
_NON_WORD = re.compile(r"[^0-9a-z]+")
_INITIALS = re.compile(r"^[A-Z]{1,3}$")
# Words that number a paper in a series ("Part II", "... 2", "... in 2024"): titles that
# differ in one are two papers however alike the rest.
_NUMBERING = re.compile(r"^(?:\d+|i{1,3}|iv|vi{0,3}|ix|x)$")


@dataclass(frozen=True)
class Verdict:
    """Whether two records are one paper, the rule that decided, and the reason in words."""

    same: bool
    rule: str  # id, relation, arxiv-ids, doi-registrant, response, title-authors, ...
    reason: str
    title_similarity: float | None = None
    author_overlap: float | None = None
    evidence: dict[str, str] = field(default_factory=dict)


def same_paper(a: PaperRecord, b: PaperRecord) -> Verdict:
    """Whether `a` and `b` are one paper (the order of the two does not change the answer)."""
    verdict = _by_identifiers(a, b) or _by_identifiers(b, a, swapped=True)
    if verdict:
        return verdict
    conflict = _conflicting_ids(a, b)
    if conflict:
        return Verdict(False, conflict[0], conflict[1])
    return _by_text(a, b)


# ---------------------------------------------------------------- identifiers
def identifiers(record: PaperRecord) -> set[str]:
    """Every id the record is known by: its own, its DOI, arXiv's DOI for an arXiv paper."""
    ids = {record.id}
    if record.doi:
        with contextlib.suppress(ValueError):  # a malformed DOI identifies nothing
            ids.add("doi:" + normalize_doi(record.doi))
    arxiv = _arxiv_id(record.id)
    if arxiv:
        ids.add(f"doi:10.48550/arxiv.{arxiv.lower()}")
    found = {_ARXIV_DOI.match(i) for i in ids}
    ids |= {m.group(1) for m in found if m and _arxiv_id(m.group(1))}
    return ids


def _arxiv_id(text: str) -> str | None:
    if text.startswith("doi:"):
        return None
    try:
        return split_arxiv_id(text)[0]
    except ValueError:
        return None


def _by_identifiers(a: PaperRecord, b: PaperRecord, swapped: bool = False) -> Verdict | None:
    ids_a, ids_b = identifiers(a), identifiers(b)
    shared = ids_a & ids_b
    if shared and not swapped:
        key = sorted(shared)[0]
        how = "the same id" if a.id == b.id else f"the same identifier {key}"
        return Verdict(True, "id", f"{_name(a)} and {_name(b)} carry {how}",
                       evidence={"identifier": key})
    for kind, target in a.relations:
        if kind in SAME_WORK and target in ids_b:
            said = kind.replace("-", " ")
            return Verdict(True, "relation", f"{_source(a)} says {a.id} {said} {target}",
                           evidence={"relation": kind, "from": a.id, "to": target})
    return None


def _conflicting_ids(a: PaperRecord, b: PaperRecord) -> tuple[str, str] | None:
    """Identifiers that two records of one paper could not have."""
    arxiv_a, arxiv_b = _arxiv_id(a.id), _arxiv_id(b.id)
    if arxiv_a and arxiv_b and arxiv_a != arxiv_b:
        return "arxiv-ids", f"two arXiv papers: {arxiv_a} and {arxiv_b}"
    dois_a = {i for i in identifiers(a) if i.startswith("doi:")}
    dois_b = {i for i in identifiers(b) if i.startswith("doi:")}
    for doi_a in dois_a:
        for doi_b in dois_b:
            if _registrant(doi_a) == _registrant(doi_b):
                # One registrant does not give one paper two DOIs (a preprint server's
                # versions share theirs); a journal and a preprint server are two registrants.
                return ("doi-registrant", f"two DOIs of one registrant that neither links: "
                        f"{doi_a[4:]} and {doi_b[4:]}")
    return None


def _registrant(doi_id: str) -> str:
    return doi_id[4:].partition("/")[0]


# ---------------------------------------------------------------- text
def _by_text(a: PaperRecord, b: PaperRecord) -> Verdict:
    title_a, title_b = normalized_title(a.title), normalized_title(b.title)
    response_a, response_b = _response_prefix(title_a), _response_prefix(title_b)
    if response_a != response_b:
        which, other = (a, b) if response_a else (b, a)
        return Verdict(False, "response", f"{_name(which)} is a {response_a or response_b} "
                       f"about a paper, not {_name(other)} itself")
    numbers = _numbering_differs(title_a, title_b)
    if numbers:
        return Verdict(False, "numbering", f"the titles differ in a number ({numbers}): "
                       "two papers of a series")
    title_sim = title_similarity(title_a, title_b)
    overlap, matched = author_overlap(a.authors, b.authors)
    sims = {"title_similarity": title_sim, "author_overlap": overlap}
    if title_sim < TITLE_CLOSE:
        return Verdict(False, "title", f"the titles differ (similarity {title_sim:.2f})", **sims)
    # Two names in common at least when both lists have two: one shared "Yu Wang" is chance.
    if overlap is not None and (overlap < AUTHORS_SAME or len(matched) < min(
            2, len(a.authors), len(b.authors))):
        return Verdict(False, "authors", f"the same title but other authors ({_share(matched, a, b)}"
                       " in common)", **sims)
    abstract_sim = abstract_similarity(a.abstract, b.abstract)
    short = len(title_a.split()) < 4  # "The forecast trap": many papers could be called that
    agree = abstract_sim is not None and abstract_sim >= ABSTRACT_SAME
    if overlap is None:
        if title_sim >= TITLE_SAME and agree and not short:
            return Verdict(True, "title-abstract", "the same title and abstract "
                           "(no authors to compare)", **sims)
        return Verdict(False, "no-authors", "no authors to compare, and title and abstract "
                       "are not enough", **sims)
    if short and (overlap < 0.8 or (abstract_sim is not None and abstract_sim < 0.3)):
        return Verdict(False, "short-title", f"a short title shared, but not enough else "
                       f"({_share(matched, a, b)} authors in common)", **sims)
    if title_sim >= TITLE_SAME or agree:
        how = "the same title" if title_sim >= TITLE_SAME else (
            f"a close title ({title_sim:.2f}) and the same abstract")
        return Verdict(True, "title-authors", f"{how} and {_share(matched, a, b)} authors "
                       f"in common ({', '.join(matched[:3])}{', ...' if len(matched) > 3 else ''})",
                       **sims)
    return Verdict(False, "title", f"close titles ({title_sim:.2f}) but the abstracts differ",
                   **sims)


@lru_cache(maxsize=65536)
def normalized_title(title: str) -> str:
    """A title as matching sees it: no markup or TeX, no accents, one case, words only."""
    return _words(inline_text(title))


def _words(text: str) -> str:
    text = _TEX_COMMAND.sub(" ", text.replace("$", ""))
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    return " ".join(_NON_WORD.sub(" ", text).split())


def _response_prefix(title: str) -> str:
    match = _RESPONSE.match(title)
    return match.group(0) if match else ""


def _numbering_differs(a: str, b: str) -> str:
    """The numbering words one title has and the other lacks, as text ('' when none)."""
    # Counted, not a set: "Part I.ii: Part I" and "Part I.ii: Part II" differ.
    words_a = Counter(w for w in a.split() if _NUMBERING.match(w))
    words_b = Counter(w for w in b.split() if _NUMBERING.match(w))
    return ", ".join(sorted((words_a - words_b) + (words_b - words_a)))


def title_similarity(a: str, b: str) -> float:
    """1.0 for equal normalized titles, else how alike their characters are (0..1)."""
    if a == b:
        return 1.0
    if not a or not b:
        return 0.0
    return SequenceMatcher(None, a, b, autojunk=False).ratio()


def abstract_similarity(a: str, b: str) -> float | None:
    """Share of the smaller abstract's words found in the other; None when one is missing."""
    words_a, words_b = _abstract_words(a), _abstract_words(b)
    if len(words_a) < 5 or len(words_b) < 5:
        return None
    return len(words_a & words_b) / min(len(words_a), len(words_b))


def _abstract_words(text: str) -> frozenset[str]:
    return frozenset(_words(to_text(text or "")).split())


# ---------------------------------------------------------------- authors
def name_key(name: str) -> tuple[str, str]:
    """(family name, first initial) of a name written any common way; both normalized.

    'Kevin M. Wright', 'K. M. Wright', 'Wright, K. M.', 'Wright KM' -> ('wright', 'k').
    """
    text = " ".join(inline_text(name).split())
    family, comma, given = text.partition(",")
    if not comma:
        parts = text.split(" ")
        if len(parts) >= 2 and _INITIALS.match(parts[-1]):  # 'Wright KM' (PubMed style)
            family, given = " ".join(parts[:-1]), parts[-1]
        else:
            family, given = parts[-1], " ".join(parts[:-1])
    family_words = _words(family).split()
    given_words = _words(given).split()
    return (family_words[-1] if family_words else "", given_words[0][:1] if given_words else "")


def _names_match(a: tuple[str, str], b: tuple[str, str]) -> bool:
    if not a[0] or not b[0]:
        return False
    if a[0] == b[0]:
        return not a[1] or not b[1] or a[1] == b[1]
    return False


def _tokens_match(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Every word of the shorter name is a word or an initial of the longer one, and one
    whole word is shared: 'Yu Wang' and 'Wang Yu', 'S. H. S' and 'Sasmita Harini S'."""
    shorter, longer = (a, b) if len(a) <= len(b) else (b, a)
    if not shorter:
        return False
    left = list(longer)
    whole = False
    for word in sorted(shorter, key=len, reverse=True):  # whole words claim theirs first
        hit = next((i for i, other in enumerate(left) if other == word), None)
        if hit is None:
            hit = next((i for i, other in enumerate(left)
                        if min(len(word), len(other)) == 1 and word[0] == other[0]), None)
        else:
            whole = whole or len(word) > 1
        if hit is None:
            return False
        left.pop(hit)
    return whole


@lru_cache(maxsize=65536)
def _name_forms(name: str) -> tuple[tuple[str, str], tuple[str, ...]]:
    return name_key(name), tuple(_words(inline_text(name)).split())


def author_overlap(a: list[str], b: list[str]) -> tuple[float | None, list[str]]:
    """Share of the shorter list found in the other (any order, any spelling of the names),
    and the names found; None when either list is empty."""
    names_a = [n for n in a if n.strip()]
    names_b = [n for n in b if n.strip()]
    if not names_a or not names_b:
        return None, []
    shorter, longer = (names_a, names_b) if len(names_a) <= len(names_b) else (names_b, names_a)
    left = [_name_forms(n) for n in longer]
    matched: list[str] = []
    for name in shorter:
        key, tokens = _name_forms(name)
        hit = next((i for i, other in enumerate(left) if _names_match(key, other[0])), None)
        if hit is None:  # names written in another order, or with their initials elsewhere
            hit = next((i for i, other in enumerate(left) if _tokens_match(tokens, other[1])),
                       None)
        if hit is not None:
            left.pop(hit)
            matched.append(name)
    return len(matched) / len(shorter), matched


def _share(matched: list[str], a: PaperRecord, b: PaperRecord) -> str:
    return f"{len(matched)} of {min(len(a.authors), len(b.authors))}"


def _source(record: PaperRecord) -> str:
    return {"biorxiv": "bioRxiv", "medrxiv": "medRxiv", "crossref": "Crossref",
            "arxiv": "arXiv"}.get(record.source, record.source)


def _name(record: PaperRecord) -> str:
    return f"{record.id} ({_source(record)})"


# ---------------------------------------------------------------- candidates
def candidate_keys(record: PaperRecord) -> set[str]:
    """Keys under which a store can index the record to find the records to compare it with:
    its identifiers, the ids it links to, and its normalized title. Two records of one paper
    share a key unless a title was edited and no identifier links them."""
    keys = {f"id:{i}" for i in identifiers(record)}
    keys |= {f"id:{target}" for kind, target in record.relations if kind in SAME_WORK}
    title = normalized_title(record.title)
    if title:
        keys.add(f"title:{title}")
        # One edit (a word changed, a subtitle dropped) leaves one half of the title whole.
        words = title.split()
        if len(words) >= 4:
            half = (len(words) + 1) // 2
            keys.add("head:" + " ".join(words[:half]))
            keys.add("tail:" + " ".join(words[half:]))
        if len(words) >= 7:  # an edit that splits or joins words moves the halves
            keys.add("first:" + " ".join(words[:3]) + "|" + str(len(words) // 4))
            keys.add("last:" + " ".join(words[-3:]) + "|" + str(len(words) // 4))
    return keys
