-- TL;DR and blurb per paper with provenance; a flagged summary is regenerated or hidden.
CREATE TABLE summaries (
    paper_id TEXT PRIMARY KEY,
    tldr TEXT NOT NULL,
    blurb TEXT NOT NULL,
    writer TEXT NOT NULL,                -- 'builtin' or 'llm'
    model TEXT,                          -- LLM model name, or builtin writer version
    prompt_version TEXT,
    input_hash TEXT NOT NULL,            -- hash of title+abstract+authors: stale when it changes
    created_at TEXT NOT NULL,
    notes TEXT,                          -- why a fallback happened, gate failures
    tokens INTEGER,
    seconds REAL,
    flagged INTEGER NOT NULL DEFAULT 0,
    flag_reason TEXT,
    hidden INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
