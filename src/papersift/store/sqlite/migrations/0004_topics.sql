-- Fine topics grouped into sections, paper assignments, rebuild history and slug redirects.
CREATE TABLE sections (
    id INTEGER PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL,
    position INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE topics (
    id INTEGER PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL,                 -- key-phrase label, e.g. 'reward modelling, preference optimisation'
    key_phrases TEXT NOT NULL DEFAULT '[]', -- JSON list
    llm_label TEXT,                      -- optional short human label
    section_id INTEGER REFERENCES sections(id),
    is_other INTEGER NOT NULL DEFAULT 0, -- the bucket for papers that fit nothing
    size INTEGER NOT NULL DEFAULT 0,
    centroid BLOB,                       -- float32 unit vector
    created_build INTEGER,
    retired_build INTEGER               -- set when a rebuild dropped it (merged/split away)
);

CREATE TABLE paper_topics (
    paper_id TEXT PRIMARY KEY,
    topic_id INTEGER NOT NULL REFERENCES topics(id),
    similarity REAL,
    assigned_by TEXT NOT NULL            -- 'build' or 'assign'
) WITHOUT ROWID;
CREATE INDEX paper_topics_topic ON paper_topics(topic_id, paper_id);

CREATE TABLE topic_builds (
    id INTEGER PRIMARY KEY,
    created_at TEXT NOT NULL,
    method TEXT NOT NULL,
    params TEXT NOT NULL DEFAULT '{}',
    n_papers INTEGER NOT NULL,
    report TEXT                          -- JSON: kept, new, merged, split, retired
);

CREATE TABLE topic_redirects (
    old_slug TEXT PRIMARY KEY,
    new_topic_id INTEGER NOT NULL REFERENCES topics(id),
    reason TEXT NOT NULL,                -- 'merge', 'split' or 'rename'
    build_id INTEGER
);
