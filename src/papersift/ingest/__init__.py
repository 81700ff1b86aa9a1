"""Ingest: records from sources into the store (prepare, merge rules, the file helper, the stage).

Kept free of imports: the store imports prepare and merge, and the stage imports the store.
"""
