"""A reader's data in their own hands: everything they gave, as one JSON document, and deleting it all."""

from __future__ import annotations

from typing import Any

from papersift.clock import utc_now
from papersift.readers import accounts
from papersift.settings import Settings
from papersift.store import Store

FORMAT = "papersift-reader-export/1"


def export_reader(store: Store, reader_id: int) -> dict[str, Any]:
    """Follows, ratings, feedback and entries, collections, digest settings and history, and
    what the feed has shown."""
    readers, delivery = store.readers, store.delivery
    reader = readers.get_reader(reader_id) or {}
    return {
        "format": FORMAT, "exported_at": utc_now(),
        "reader": {k: reader.get(k) for k in ("name", "email", "created_at", "last_seen_at")},
        "follows": readers.follows_of(reader_id),
        "claims": readers.claims_of(reader_id),
        "reactions": readers.reactions_of(reader_id),
        "feedback": readers.feedback_of(reader_id),
        "profile_entries": readers.profile_entries(reader_id),
        "collections": [dict(c, papers=readers.collection_papers(reader_id, c["name"]))
                        for c in readers.collections_of(reader_id)],
        "digest_settings": delivery.delivery_settings(reader_id),
        "digests": [{k: d[k] for k in ("day", "status", "papers", "sent_at", "attempts")}
                    for d in delivery.digests_of(reader_id)],
        "shown": readers.shown_of(reader_id),
    }


def delete_account(store: Store, settings: Settings, reader: dict[str, Any],
                   password: str) -> None:
    """Delete the account and everything in it, once the password is confirmed."""
    accounts.log_in(store, settings, reader["name"], password)  # LoginRefused if wrong
    store.readers.remove_reader(reader["id"])
