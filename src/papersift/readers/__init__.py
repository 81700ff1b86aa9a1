"""Readers: accounts, and the signals each one gives (follows, reactions, collections, feedback, imports)."""
