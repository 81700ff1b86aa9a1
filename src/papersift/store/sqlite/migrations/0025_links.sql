-- Issue 34: links between papers through the names of their artefacts, threads, weekly briefs.
-- All of it is derived (the links and briefs stages rebuild it from the papers), so
-- `papersift migrate` does not copy it.

-- The papers the links stage has read, in the order it read them: what it has still to read
-- is every other live paper.
CREATE TABLE link_papers (
    paper_id TEXT PRIMARY KEY,
    day TEXT NOT NULL
) WITHOUT ROWID;

-- Named artefacts (a method, dataset, benchmark, model) and the paper that coined each.
CREATE TABLE artefacts (
    name TEXT NOT NULL,
    origin_id TEXT NOT NULL,
    day TEXT NOT NULL,
    categories TEXT NOT NULL DEFAULT '',      -- space-separated
    how TEXT NOT NULL,                        -- title, intro
    risky INTEGER NOT NULL DEFAULT 0,         -- the name had other uses before
    PRIMARY KEY (name, origin_id)
) WITHOUT ROWID;
CREATE INDEX artefacts_origin ON artefacts(origin_id);

-- A later paper (source) builds on or compares with an earlier one's artefact (target).
CREATE TABLE paper_links (
    source_id TEXT NOT NULL,
    target_id TEXT NOT NULL,
    name TEXT NOT NULL,
    day TEXT NOT NULL,                        -- the source's announcement day
    similarity REAL NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('linked', 'ambiguous')),
    alternatives TEXT NOT NULL DEFAULT '[]',  -- JSON list of other origins it could mean
    PRIMARY KEY (source_id, target_id, name)
) WITHOUT ROWID;
CREATE INDEX paper_links_target ON paper_links(target_id, day);

-- The linker's counters between runs: uses of a name no artefact explains ('refs'), uses of
-- an artefact in its first week ('young', by artefact key), names withdrawn as old ('old').
CREATE TABLE link_counts (
    kind TEXT NOT NULL CHECK (kind IN ('refs', 'young', 'old')),
    key TEXT NOT NULL,
    value INTEGER NOT NULL,
    PRIMARY KEY (kind, key)
) WITHOUT ROWID;

CREATE TABLE link_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- Threads: an origin with its follow-ups and the papers close to them in meaning and time.
CREATE TABLE threads (
    id TEXT PRIMARY KEY,                      -- NAME-ORIGINID
    name TEXT NOT NULL,
    origin_id TEXT NOT NULL,
    day TEXT NOT NULL,                        -- the origin's day
    last_day TEXT NOT NULL,                   -- the newest member's day
    size INTEGER NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX threads_last_day ON threads(last_day);

CREATE TABLE thread_members (
    thread_id TEXT NOT NULL,
    paper_id TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('origin', 'followup', 'close')),
    score REAL NOT NULL,
    day TEXT NOT NULL,
    PRIMARY KEY (thread_id, paper_id)
) WITHOUT ROWID;
CREATE INDEX thread_members_paper ON thread_members(paper_id);
CREATE INDEX thread_members_day ON thread_members(day);

-- One topic's ISO week: the page's whole dict, and a hash of what it was built from.
CREATE TABLE briefs (
    topic_id INTEGER NOT NULL,
    week TEXT NOT NULL,                       -- 2026-W07
    payload TEXT NOT NULL,                    -- JSON
    writer TEXT NOT NULL,
    input_hash TEXT NOT NULL,
    built_at TEXT NOT NULL,
    PRIMARY KEY (topic_id, week)
);
CREATE INDEX briefs_week ON briefs(week);

-- A reader may follow a thread ('thread:ID') as a topic. SQLite cannot change a CHECK in
-- place: the table is made again with the same rows.
CREATE TABLE follows_new (
    reader_id INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('topic', 'section', 'author', 'category', 'search',
                                       'thread')),
    value TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (reader_id, kind, value)
);
INSERT INTO follows_new (reader_id, kind, value, created_at)
    SELECT reader_id, kind, value, created_at FROM follows;
DROP TABLE follows;
ALTER TABLE follows_new RENAME TO follows;
