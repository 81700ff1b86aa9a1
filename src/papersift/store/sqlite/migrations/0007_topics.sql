-- Cache of LLM topic names keyed by a hash of what the LLM was shown, and lookups by section.
CREATE TABLE topic_label_cache (
    input_hash TEXT PRIMARY KEY,         -- hash of model, prompt version, key phrases, titles
    label TEXT,                          -- NULL when the LLM's answer failed validation
    model TEXT NOT NULL,
    created_at TEXT NOT NULL,
    notes TEXT
) WITHOUT ROWID;
CREATE INDEX topics_section ON topics(section_id) WHERE retired_build IS NULL;
