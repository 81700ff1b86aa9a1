"""Turn what a reader types into filters and a well-formed keyword query, repairing what an index would reject."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from papersift.errors import UsageError
from papersift.store.contracts import SearchFilters, Term

MAX_QUERY_CHARS = 1000  # longer input is cut (with a note): a query, not a document
MAX_TERMS = 32          # more terms only slow the OR query down without changing the ranking much

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
    text = "".join(" " if unicodedata.category(ch)[0] == "C" else ch for ch in text)
    return re.sub(r"\s+", " ", text).strip()


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
    text = _FILTER.sub(lambda m: _take_filter(m, filters, notes), text)
    items = _items(text, notes)
    terms = [i for i in items if isinstance(i, Term)]
    if len(terms) > MAX_TERMS:
        kept, count = [], 0
        for item in items:
            if isinstance(item, Term):
                count += 1
                if count > MAX_TERMS:
                    break
            kept.append(item)
        items = _fix_operators(kept, notes)
        notes.append(f"only the first {MAX_TERMS} words of the query were used for keywords")
    free = re.sub(r"\s+", " ", text.replace('"', " ")).strip()
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
    return [w for w in re.split(r"[^\w]+|_", text) if w]


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
