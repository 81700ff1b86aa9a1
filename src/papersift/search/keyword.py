"""Turn what a reader types into filters and a well-formed keyword query, repairing what an index would reject."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from papersift.errors import UsageError
from papersift.store.search import Search as SearchStore  # a store's keyword search
from papersift.store.values import KeywordQuery, SearchFilters, Term

MAX_QUERY_CHARS = 1000  # longer input is cut (with a note): a query, not a document
MAX_TERMS = 32          # operands of a query written with operators, phrases or prefixes
MAX_WORDS = 64          # distinct meaningful words a plain query is ranked on
MAX_WEIGHT = 3          # a word repeated more often than this counts this many times
# The work of a keyword query, in postings (paper, term) that bm25 scores, as the index's
# document counts tell before it runs: FTS5 scores each at ~1 µs (2 cores here, 98k papers).
# It also reads every operand's whole posting list (to count its papers for the idf, and to
# seek through it): ~1/30 of a scored posting each, up to ~1/2 for a prefix's merged lists. Only the
# scored part shrinks when fewer papers are searched (docs/benchmark-log.md, issue 17).
POSTINGS_BUDGET = 8000  # plain words: past this the most common ones are left out of the ranking
WORK_CAP = 30_000       # any query: past this it is simplified, then only the newest papers searched
SCAN_RATIO = 30         # postings read per scored posting's worth of work
PREFIX_SCAN_RATIO = 2   # the same for the postings of a prefix's words, merged into one list
MIN_PREFIX = 3          # letters a prefix* needs; shorter ones are searched as the word itself
MAX_EXPANSIONS = 200    # words a prefix* may stand for; one that stands for more is the word itself
MAX_PREFIXES = 4        # prefixes a query may hold (finding a prefix's words takes ~1-2 ms)

# Words that carry no meaning in a search: dropped from the FTS side (the semantic side keeps them).
STOPWORDS = frozenset(["a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did", "do", "does", "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "may", "might", "more", "most", "no", "not", "of", "on", "or", "our", "over", "such", "than", "that", "the", "their", "then", "there", "these", "they", "this", "those", "through", "to", "under", "up", "via", "was", "we", "were", "what", "when", "where", "which", "while", "who", "why", "will", "with", "within", "without", "would", "you", "your", "using", "use", "used", "based", "between", "both", "each", "other", "also", "only", "very", "via", "new", "show", "shows"])

_FILTER = re.compile(
    r'(?<!\S)(au|author|cat|category|year|date|since|until|topic):(?:"([^"]*)"|(\S+))', re.I)
_TOKEN = re.compile(r'"[^"]*"|\(|\)|[^\s()"]+|"')
_YEAR_RANGE = re.compile(r"^(\d{4})(?:\s*(?:\.\.|-|–|to)\s*(\d{4}))?$")
_DATE = re.compile(r"^\d{4}(?:-\d{2}(?:-\d{2})?)?$")
_OPERATORS = {"AND", "OR", "NOT"}


class QueryError(UsageError):
    """A query that cannot be answered, with a message meant for the reader."""


@dataclass
class ParsedQuery:
    """The reader's query split into text for each side, filters, and notes on what was repaired."""

    raw: str
    text: str                       # cleaned free text (filters removed): the semantic side embeds it
    items: list[Term | str] = field(default_factory=list)  # terms and explicit AND/OR/NOT
    filters: SearchFilters = field(default_factory=SearchFilters)
    notes: list[str] = field(default_factory=list)

    @property
    def terms(self) -> list[Term]:
        return [item for item in self.items if isinstance(item, Term)]

    @property
    def explicit(self) -> bool:
        """True when the reader used operators, phrases or prefixes: honour them as written."""
        return any(isinstance(i, str) for i in self.items) or any(
            t.phrase or t.prefix for t in self.terms)


def clean_text(raw: str) -> str:
    """NFKC, control and format characters to spaces, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", raw)
    if text.isascii():  # its only C characters are the controls: one translate, not a loop
        text = text.translate(_ASCII_CONTROLS)
    else:
        text = "".join(" " if unicodedata.category(ch)[0] == "C" else ch for ch in text)
    return " ".join(text.split())  # \s runs to one space, stripped (str.split's \s is re's)


_ASCII_CONTROLS = {code: " " for code in [*range(32), 127]}


def parse_query(raw: str) -> ParsedQuery:
    """Split filters (au:, cat:, year:, date:, since:, until:, topic:) from the text and repair
    the rest into operands and operators that always make a valid FTS5 expression."""
    if not isinstance(raw, str):
        raise QueryError("the query must be text")
    text = clean_text(raw)
    notes: list[str] = []
    if len(text) > MAX_QUERY_CHARS:
        text = text[:MAX_QUERY_CHARS].rsplit(" ", 1)[0]
        notes.append(f"the query was cut to its first {MAX_QUERY_CHARS} characters")
    filters = SearchFilters()
    if ":" in text:  # every filter has one
        text = _FILTER.sub(lambda m: _take_filter(m, filters, notes), text)
    items = _items(text, notes)
    terms = [i for i in items if isinstance(i, Term)]
    written = any(isinstance(i, str) for i in items) or any(t.phrase or t.prefix for t in terms)
    # A query of plain words is ranked on its distinct meaningful words (capped by the plan);
    # one with operators, phrases or prefixes is run as written, so its length is capped here.
    if written and len(terms) > MAX_TERMS:
        kept, count = [], 0
        for item in items:
            if isinstance(item, Term):
                count += 1
                if count > MAX_TERMS:
                    break
            kept.append(item)
        items = _fix_operators(kept, notes)
        notes.append(f"only the first {MAX_TERMS} words of the query were used for keywords")
    free = " ".join(text.replace('"', " ").split())
    free = " ".join(w for w in free.split(" ") if w not in _OPERATORS)
    return ParsedQuery(raw=raw, text=free, items=items, filters=filters, notes=notes)


def _take_filter(match: re.Match[str], filters: SearchFilters, notes: list[str]) -> str:
    key = match.group(1).lower()
    value = (match.group(2) if match.group(2) is not None else match.group(3)).strip()
    if not value:
        notes.append(f"ignored the empty filter {key}:")
        return " "
    if key in {"au", "author"}:
        filters.authors.append(value)
    elif key in {"cat", "category"}:
        filters.categories.append(value)
    elif key == "topic":
        filters.topic = value
    elif key == "year":
        found = _YEAR_RANGE.match(value)
        if not found:
            notes.append(f"ignored year:{value} (use year:2025 or year:2024..2025)")
            return " "
        first, last = found.group(1), found.group(2) or found.group(1)
        filters.since, filters.until = min(first, last), max(first, last)
    elif key == "date":
        first, _, last = value.partition("..")
        if not _DATE.match(first) or (last and not _DATE.match(last)):
            notes.append(f"ignored date:{value} (use date:2025-03 or date:2025-01-01..2025-03-31)")
            return " "
        filters.since, filters.until = first, last or first
    else:  # since / until
        if not _DATE.match(value):
            notes.append(f"ignored {key}:{value} (use a date like 2025-03-01)")
            return " "
        setattr(filters, key, value)
    return " "


def _items(text: str, notes: list[str]) -> list[Term | str]:
    items: list[Term | str] = []
    tokens = _TOKEN.findall(text)
    if tokens.count('"') % 2 == 1 or '"' in tokens:
        notes.append("an unbalanced quote was ignored")
    if "(" in tokens or ")" in tokens:
        notes.append("parentheses are not supported and were ignored")
    for token in tokens:
        if token in {'"', "(", ")"}:
            continue
        if token.startswith('"') and token.endswith('"') and len(token) >= 2:
            words = _words(token[1:-1])
            if words:
                items.append(Term(" ".join(words), phrase=len(words) > 1))
            continue
        if token in _OPERATORS:
            items.append(token)
            continue
        prefix = token.endswith("*")
        words = _words(token)
        if not words:
            continue
        if prefix and len(words) == 1 and len(words[0]) >= 2:
            items.append(Term(words[0], prefix=True))
        else:
            items.extend(Term(w) for w in words)
    return _fix_operators(items, notes)


def _words(text: str) -> list[str]:
    """Letters and digits only: FTS5's unicode61 tokenizer splits on everything else anyway."""
    if text.isalnum():  # no character that is not \w, and no _: the word itself
        return [text]
    return [w for w in _NOT_WORD.split(text) if w]


_NOT_WORD = re.compile(r"[^\w]+|_")


def _fix_operators(items: list[Term | str], notes: list[str]) -> list[Term | str]:
    """Operators only between two operands; a leading, trailing or doubled one is dropped."""
    fixed: list[Term | str] = []
    dropped = False
    for item in items:
        if isinstance(item, str) and (not fixed or isinstance(fixed[-1], str)):
            dropped = True
            continue
        fixed.append(item)
    while fixed and isinstance(fixed[-1], str):
        fixed.pop()
        dropped = True
    if dropped:
        notes.append("an operator without a word on each side was ignored")
    return fixed


# ---------------------------------------------------------------- the keyword side's plan

@dataclass
class KeywordPlan:
    """What the keyword side runs, the stems it highlights, and its work (in scored postings)."""

    query: KeywordQuery | None
    stems: list[str] = field(default_factory=list)
    work: int = 0
    relaxed: KeywordQuery | None = None  # run when `query` (implicit ANDs only) matches nothing


@dataclass
class _Cost:
    scored: int = 0  # postings bm25 scores: the share of papers searched scales them
    fixed: int = 0   # the lists read whatever the share, in scored postings' worth


def plan_keywords(search: SearchStore, parsed: ParsedQuery, rank: bool = True) -> KeywordPlan:
    """The keyword query for a parsed query, its work capped at WORK_CAP.

    Plain words are ranked (OR) on the meaningful ones, each counted as often as the query
    repeats it; a query with operators, phrases or prefixes is run as written. With `rank`
    False (semantic search) only the stems to highlight are found."""
    if not parsed.terms:
        return KeywordPlan(None)
    if not rank:
        words = list(dict.fromkeys(t.text.lower() for t in parsed.terms
                                   if t.text.lower() not in STOPWORDS))
        return KeywordPlan(None, [tok for toks in search.index_tokens(words) for tok in toks])
    if parsed.explicit:
        return _as_written(search, parsed)
    return _ranked_words(search, parsed.terms, parsed.notes)


def _ranked_words(search: SearchStore, terms: list[Term], notes: list[str]) -> KeywordPlan:
    """OR of the distinct meaningful words (stop words out), weighted by their repeats; the
    most common are left out past POSTINGS_BUDGET (they move the ranking least: low idf)."""
    content = [t for t in terms if t.text.lower() not in STOPWORDS] or terms
    words = list(dict.fromkeys(t.text.lower() for t in content))
    tokens = dict(zip(words, search.index_tokens(words), strict=True))
    groups: dict[tuple[str, ...], list[Term]] = {}  # one per stem: "model" and "models" alike
    for term in content:
        key = tuple(tokens[term.text.lower()])
        if key:
            groups.setdefault(key, []).append(term)
    counts = search.term_doc_counts(sorted({tok for key in groups for tok in key}))
    costed = sorted(((max(counts.get(tok, 0) for tok in key), key) for key in groups),
                    key=lambda ck: ck[0])
    kept: list[Term] = []
    costs: list[_Cost] = []
    for docs, key in costed:
        weight = min(len(groups[key]), MAX_WEIGHT)
        spent = sum(c.scored for c in costs)
        if kept and (spent + docs * weight > POSTINGS_BUDGET or len(kept) >= MAX_WORDS):
            break
        kept.append(Term(groups[key][0].text, weight=weight))
        costs.append(_Cost(docs * weight, docs * weight // SCAN_RATIO))
    if len(costed) > MAX_WORDS and len(kept) == MAX_WORDS:
        notes.append(f"only the {MAX_WORDS} rarest words of the query were used for keywords")
    if not kept:
        return KeywordPlan(None)
    total = _Cost(sum(c.scored for c in costs), sum(c.fixed for c in costs))
    return _capped(KeywordQuery(kept, "OR"), [tok for key in groups for tok in key], total,
                   None, notes)


def _as_written(search: SearchStore, parsed: ParsedQuery) -> KeywordPlan:
    """The operands and operators as the reader wrote them, joined by AND where none is
    written; stop words joined that way are left out, prefixes too short or too wide are
    searched as words, and past WORK_CAP the most common operands go (each with a note)."""
    notes = parsed.notes
    items = _without_joined_stopwords(parsed.items)
    words = list(dict.fromkeys(i.text.lower() for i in items if isinstance(i, Term)))
    tokens = dict(zip(words, search.index_tokens(words), strict=True))
    counts = search.term_doc_counts(sorted({tok for toks in tokens.values() for tok in toks}))
    costs: dict[int, _Cost] = {}
    as_words: list[str] = []
    prefixes = 0
    for position, item in enumerate(items):
        if isinstance(item, Term):
            prefixes += item.prefix
            cost = None if prefixes > MAX_PREFIXES and item.prefix else _operand_cost(
                search, item, tokens[item.text.lower()], counts)
            if cost is None:
                as_words.append(item.text)
                items[position] = item = Term(item.text)
                cost = _operand_cost(search, item, tokens[item.text.lower()], counts)
            costs[position] = cost
    if as_words:
        notes.append(f"searched as whole words: {', '.join(w + '*' for w in as_words)} (a prefix"
                     f" needs at least {MIN_PREFIX} letters and may not begin too many words;"
                     f" a query may hold {MAX_PREFIXES})")
    items, costs = _within_fixed_cap(items, costs, notes)
    total = _Cost(_scored(items, costs), sum(c.fixed for c in costs.values()))
    relaxed = None
    if not any(isinstance(i, str) for i in items) and len(costs) > 1:
        relaxed = KeywordQuery(list(items), "OR")  # runs after the AND, when that matched nothing
        total.scored += sum(c.scored for c in costs.values())
        total.fixed *= 2
    stems = [tok for toks in tokens.values() for tok in toks]
    return _capped(KeywordQuery(items, "AND"), stems, total, relaxed, notes)


def _operand_cost(search: SearchStore, term: Term, tokens: list[str], counts: dict[str, int]
                  ) -> _Cost | None:
    """A word's or phrase's postings from the document counts (a phrase scores at most its
    rarest word's papers and reads all its words'); a prefix's from the words it stands for,
    None when it is too short or stands for too many."""
    if term.prefix:
        prefix = tokens[0] if len(tokens) == 1 else ""
        if len(prefix) < MIN_PREFIX:
            return None
        expansions = search.prefix_terms(prefix, MAX_EXPANSIONS + 1)
        if len(expansions) > MAX_EXPANSIONS:
            return None
        postings = sum(expansions.values())
        if postings // PREFIX_SCAN_RATIO > WORK_CAP // 2:
            return None  # merging its lists alone would take half the cap
        return _Cost(postings, postings // PREFIX_SCAN_RATIO)
    docs = [counts.get(tok, 0) for tok in tokens] or [0]
    return _Cost(min(docs), sum(docs) // SCAN_RATIO)


def _within_fixed_cap(items: list[Term | str], costs: dict[int, _Cost], notes: list[str],
                      ) -> tuple[list[Term | str], dict[int, _Cost]]:
    """Leaves out the operands with the longest lists while reading them alone (which no
    window shortens) would take more than half the cap: a chain of the commonest words."""
    left_out: list[str] = []
    while len(costs) > 1 and sum(c.fixed for c in costs.values()) > WORK_CAP // 2:
        worst = max(costs, key=lambda pos: costs[pos].fixed)
        left_out.append(_written(items[worst]))
        items = [*items[:worst], None, *items[worst + 1:]]  # type: ignore[list-item]
        del costs[worst]
    if not left_out:
        return items, costs
    notes.append(f"left out of the keyword query, being in too many papers: {', '.join(left_out)}")
    kept = [(i, costs.get(pos)) for pos, i in enumerate(items) if i is not None]
    fixed = _fix_operators([i for i, _ in kept], [])
    # Repairing operators only removes operators; re-index the costs by the kept terms' order.
    term_costs = iter([c for i, c in kept if isinstance(i, Term)])
    return fixed, {pos: next(term_costs) for pos, i in enumerate(fixed) if isinstance(i, Term)}


def _written(term: Term | str) -> str:
    if isinstance(term, str):
        return term
    return f'"{term.text}"' if term.phrase else term.text + ("*" if term.prefix else "")


def _without_joined_stopwords(items: list[Term | str]) -> list[Term | str]:
    """Drops plain stop words that no written operator touches ("graph of" -> "graph")."""
    kept = []
    for position, item in enumerate(items):
        touched = any(isinstance(items[j], str) for j in (position - 1, position + 1)
                      if 0 <= j < len(items))
        if (isinstance(item, Term) and not item.phrase and not item.prefix and not touched
                and item.text.lower() in STOPWORDS):
            continue
        kept.append(item)
    return kept if any(isinstance(i, Term) for i in kept) else list(items)


def _scored(items: list[Term | str], costs: dict[int, _Cost]) -> int:
    """Postings bm25 scores for a written query: every OR branch's matches; a chain of ANDs
    matches at most its rarest operand's papers; NOT only removes papers."""
    work = 0
    chain: list[int] = []
    for position, item in enumerate([*items, "OR"]):
        if item == "OR":
            work += min(chain, default=0)
            chain = []
        elif isinstance(item, Term) and not (position and items[position - 1] == "NOT"):
            chain.append(costs[position].scored * max(1, item.weight))
    return work


def _capped(query: KeywordQuery, stems: list[str], cost: _Cost, relaxed: KeywordQuery | None,
            notes: list[str]) -> KeywordPlan:
    """The plan, searching only the newest papers if that is what keeps it within WORK_CAP."""
    work = cost.scored + cost.fixed
    if work <= WORK_CAP or cost.scored == 0:
        return KeywordPlan(query, stems, work, relaxed)
    share = max(WORK_CAP - cost.fixed, 0) / cost.scored
    for each in (query, relaxed):
        if each is not None:
            each.newest_share = share
    notes.append(f"the keyword query matches too many papers to rank them all: only the newest"
                 f" {share * 100:.2g}% of the papers were searched by keyword (rarer words"
                 " search all)")
    return KeywordPlan(query, stems, round(cost.fixed + share * cost.scored), relaxed)
