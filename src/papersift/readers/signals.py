"""What a reader tells papersift: follows, reactions, collections, feedback and imported papers, checked before they are kept."""

from __future__ import annotations

import re
from typing import Any

from papersift.errors import UsageError
from papersift.readers.feedback import FeedbackTooLong, Reading, read_feedback
from papersift.readers.imports import Found, read_import
from papersift.search.keyword import QueryError, parse_query
from papersift.sources.categories import is_category
from papersift.store import SearchFilters, Store

FOLLOW_KINDS = ("topic", "section", "author", "category", "search", "thread")
REACTIONS = ("up", "down", "not_interested")
ENTRY_KINDS = ("more", "less", "exclude")
_COLLECTION = re.compile(r"^[\w][\w .'-]{0,59}$")
MAX_SEARCH = 200
MAX_ENTRY = 80
# Caps on what one reader keeps: far past what a person follows or files, well short of what a
# script could pile up (each follow is matched against every new paper of every feed).
MAX_FOLLOWS = 500
MAX_COLLECTIONS = 100
MAX_COLLECTION_PAPERS = 5000


class SignalError(UsageError):
    """A follow, reaction, collection or entry that cannot be kept as asked; the message says why."""


def parse_target(text: str) -> tuple[str, str]:
    """'topic:graph-learning' -> ('topic', 'graph-learning'); SignalError if not of that form."""
    kind, sep, value = (text or "").partition(":")
    kind, value = kind.strip().lower(), _unquoted(value.strip())
    if not sep or kind not in FOLLOW_KINDS or not value:
        raise SignalError(f"follow what? Write one of {', '.join(k + ':…' for k in FOLLOW_KINDS)}"
                          f" (e.g. category:cs.LG or search:\"diffusion -medical\"), not {text!r}")
    return kind, value


def search_words(query: str) -> tuple[list[str], list[str]]:
    """A saved search's words to find and words to exclude ('diffusion -medical'), its
    filters (au:, cat:, topic:, since:, ... as the search page reads them) left out."""
    wanted, unwanted = [], []
    for word in re.findall(r"-?[\w][\w\-]*", saved_search_filters(query)[0].lower()):
        (unwanted if word.startswith("-") else wanted).append(word.lstrip("-"))
    return wanted, unwanted


def saved_search_filters(query: str) -> tuple[str, SearchFilters]:
    """A saved search's text without its filters, and the filters (what the search page
    applies to the same query)."""
    try:
        parsed = parse_query(query)
    except QueryError:
        return query, SearchFilters()
    return parsed.text, parsed.filters


def saved_search(q: str, category: str | None = None, topic: str | None = None,
                 since: str | None = None, until: str | None = None) -> str:
    """The search a reader follows from a result page: its query with the page's filters
    written in as the query's own (cat:, topic:, since:, until:), so that the feed, the
    profile's link back and the search page all read the same search."""
    parts = [q, *(f"{key}:{value}" for key, value in (("cat", category), ("topic", topic),
                                                       ("since", since), ("until", until))
                  if value and " " not in value and '"' not in value)]
    return _unquoted(" ".join(" ".join(parts).split()))


def _unquoted(value: str) -> str:
    """A value without the quotes around it (quotes inside it, au:"Ada Lovelace", stay): what
    a follow keeps, so that a page can tell whether the reader follows it."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'" and \
            value.count(value[0]) == 2:
        return value[1:-1].strip()
    return value


def _checked_follow(store: Store, kind: str, value: str) -> str:
    """The value to keep for this follow (a topic's live slug, ...); SignalError if unknown."""
    if kind == "topic":
        topic = store.topics.find_topic(value)
        if topic is None:
            raise SignalError(f"there is no topic {value!r}")
        return str(topic["slug"])
    if kind == "thread" and store.links.get_thread(value) is None:
        raise SignalError(f"there is no thread {value!r} (use the id in its page's address)")
    if kind == "section" and store.topics.find_section(value) is None:
        raise SignalError(f"there is no section {value!r}")
    if kind == "author" and store.pages.find_author(value) is None:
        raise SignalError(f"there is no author {value!r} (use the name in their page's address)")
    if kind == "category" and (not is_category(value)
                               or not store.pages.category_papers_page(value, 1, 0)[0]):
        raise SignalError(f"there are no papers in category {value!r}")
    if kind == "search":
        if len(value) > MAX_SEARCH or not (search_words(value)[0] or
                                           not saved_search_filters(value)[1].is_empty()):
            raise SignalError(f"a saved search needs words to look for (at most {MAX_SEARCH} "
                              "characters), e.g. \"diffusion -medical\"")
        return " ".join(value.split())
    return value


def follow(store: Store, reader_id: int, target: str) -> tuple[str, str]:
    kind, value = parse_target(target)
    value = _checked_follow(store, kind, value)
    follows = store.readers.follows_of(reader_id)
    if len(follows) >= MAX_FOLLOWS and not any(
            f["kind"] == kind and f["value"] == value for f in follows):
        raise SignalError(f"you follow {MAX_FOLLOWS} things already, the most one reader may; "
                          "unfollow some first (on your profile page)")
    store.readers.add_follow(reader_id, kind, value)
    return kind, value


def unfollow(store: Store, reader_id: int, target: str) -> bool:
    kind, value = parse_target(target)
    return store.readers.remove_follow(reader_id, kind, value)


def paper_of(store: Store, paper_id: str) -> str:
    """The id a signal about this paper is kept under (a duplicate's original); SignalError if
    the store has no such paper."""
    wanted = (paper_id or "").strip()
    kept = store.papers.resolve_ids([wanted]).get(wanted)
    if kept is None:
        raise SignalError(f"there is no paper {paper_id!r}")
    return kept


def react(store: Store, reader_id: int, paper_id: str, reaction: str) -> str:
    """Rate a paper up or down, mark it not interesting, or ('clear') take that back."""
    paper = paper_of(store, paper_id)
    if reaction == "clear":
        store.readers.clear_reaction(reader_id, paper)
    elif reaction in REACTIONS:
        store.readers.set_reaction(reader_id, paper, reaction)
    else:
        raise SignalError(f"a reaction is one of {', '.join(REACTIONS)} or clear, not {reaction!r}")
    return paper


def collection_name(name: str) -> str:
    name = " ".join((name or "").split())
    if not _COLLECTION.match(name):
        raise SignalError("a collection's name is 1 to 60 letters, digits, spaces, '.', ''' or '-'")
    return name


def save(store: Store, reader_id: int, collection: str, paper_id: str) -> str:
    name, paper = collection_name(collection), paper_of(store, paper_id)
    collections = {c["name"]: c["papers"] for c in store.readers.collections_of(reader_id)}
    if name not in collections and len(collections) >= MAX_COLLECTIONS:
        raise SignalError(f"you have {MAX_COLLECTIONS} collections already, the most one reader "
                          "may; save to one of them, or remove one first")
    if collections.get(name, 0) >= MAX_COLLECTION_PAPERS:
        raise SignalError(f"{name!r} holds {MAX_COLLECTION_PAPERS} papers already, the most a "
                          "collection may; start another")
    store.readers.add_to_collection(reader_id, name, paper)
    return name


def give_feedback(store: Store, reader_id: int, text: str) -> Reading:
    """Keep the reader's words and the entries read from them (nothing if nothing was read)."""
    try:
        reading = read_feedback(text or "")
    except FeedbackTooLong as exc:
        raise SignalError(str(exc)) from None
    if reading.entries:
        feedback_id = store.readers.add_feedback(reader_id, text.strip())
        for entry in reading.entries:
            store.readers.add_profile_entry(reader_id, entry.kind, entry.phrase, feedback_id)
    return reading


def add_entry(store: Store, reader_id: int, kind: str, phrase: str) -> int | None:
    phrase = " ".join((phrase or "").split())
    if kind not in ENTRY_KINDS:
        raise SignalError(f"an entry is one of {', '.join(ENTRY_KINDS)}, not {kind!r}")
    if not 2 <= len(phrase) <= MAX_ENTRY:
        raise SignalError(f"an entry's words are 2 to {MAX_ENTRY} characters")
    return store.readers.add_profile_entry(reader_id, kind, phrase)


def import_liked(store: Store, reader_id: int, text: str) -> dict[str, Any]:
    """Like the papers of pasted ids or a BibTeX file; unknown ones are reported, not fatal."""
    return like_found(store, reader_id, read_import(text or ""))


def like_found(store: Store, reader_id: int, found: Found) -> dict[str, Any]:
    """Like the papers an import found (read_import, which the site runs in a helper
    process); unknown ones are reported, not fatal."""
    wanted = [(paper_id or "").strip() for paper_id in found.ids]
    kept = store.papers.resolve_ids(wanted)  # one query and one write, however many
    liked = list(dict.fromkeys(kept[p] for p in wanted if p in kept))
    store.readers.set_reactions(reader_id, liked, "up")
    return {"liked": liked, "unknown": [p for p in wanted if p not in kept],
            "unreadable": found.unreadable}


# A claim likes the author's papers up to this many (the newest): a prolific author's whole
# list would be thousands of ratings written in one request.
MAX_CLAIM_PAPERS = 500
MAX_CLAIMS = 5


def _claimed_author(store: Store, author_slug: str) -> dict[str, Any]:
    author = store.pages.find_author((author_slug or "").strip())
    if author is None:
        raise SignalError(f"there is no author {author_slug!r}")
    return author


def author_paper_ids(store: Store, author: dict[str, Any]) -> list[str]:
    """The author's live papers, newest first (up to MAX_CLAIM_PAPERS)."""
    return [r["id"] for r in store.pages.author_papers_page(author["id"], MAX_CLAIM_PAPERS, 0)[1]]


def claim(store: Store, reader_id: int, author_slug: str) -> dict[str, Any]:
    """"This is me": the author's papers become the reader's liked papers (those the reader
    rated already keep their rating), the author is followed, and the claim is kept."""
    author = _claimed_author(store, author_slug)
    claims = store.readers.claims_of(reader_id)
    if len(claims) >= MAX_CLAIMS and author["slug"] not in {c["author_slug"] for c in claims}:
        raise SignalError(f"you have claimed {MAX_CLAIMS} authors already; remove one first "
                          "(on your profile page)")
    # The claim first: the likes it gives are those made since it (unclaim takes them back).
    store.readers.add_claim(reader_id, author["slug"])
    rated = {r["paper_id"] for r in store.readers.reactions_of(reader_id)}
    liked = [pid for pid in author_paper_ids(store, author) if pid not in rated]
    for pid in liked:
        store.readers.set_reaction(reader_id, pid, "up")
    store.readers.add_follow(reader_id, "author", author["slug"])
    return {"author": author["slug"], "liked": len(liked)}


def unclaim(store: Store, reader_id: int, author_slug: str) -> dict[str, Any]:
    """Take a claim back: the likes it gave (the author's papers liked since the claim) and the
    follow go with it."""
    author = _claimed_author(store, author_slug)
    claimed = {c["author_slug"]: c["created_at"] for c in store.readers.claims_of(reader_id)}
    if author["slug"] not in claimed:
        return {"author": author["slug"], "unliked": 0}
    since = claimed[author["slug"]][:19]
    theirs = set(author_paper_ids(store, author))
    unliked = [r["paper_id"] for r in store.readers.reactions_of(reader_id)
               if r["paper_id"] in theirs and r["reaction"] == "up" and r["at"][:19] >= since]
    for pid in unliked:
        store.readers.clear_reaction(reader_id, pid)
    store.readers.remove_follow(reader_id, "author", author["slug"])
    store.readers.remove_claim(reader_id, author["slug"])
    return {"author": author["slug"], "unliked": len(unliked)}
