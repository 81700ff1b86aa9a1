"""Commands of the topics stage: topics build/assign/list/show, eval topics."""
