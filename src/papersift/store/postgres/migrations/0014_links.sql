-- Issue 34: links between papers through the names of their artefacts, threads, weekly briefs.
-- All of it is derived (the links and briefs stages rebuild it from the papers), so
-- `papersift migrate` does not copy it.

-- The papers the links stage has read, in the order it read them: what it has still to read
-- is every other live paper.
CREATE TABLE link_papers (
    paper_id text COLLATE "C" PRIMARY KEY,
    day text COLLATE "C" NOT NULL
);

-- Named artefacts (a method, dataset, benchmark, model) and the paper that coined each.
CREATE TABLE artefacts (
    name text COLLATE "C" NOT NULL,
    origin_id text COLLATE "C" NOT NULL,
    day text COLLATE "C" NOT NULL,
    categories text NOT NULL DEFAULT '',      -- space-separated
    how text COLLATE "C" NOT NULL,                        -- title, intro
    risky integer NOT NULL DEFAULT 0,         -- the name had other uses before
    PRIMARY KEY (name, origin_id)
);
CREATE INDEX artefacts_origin ON artefacts(origin_id);

-- A later paper (source) builds on or compares with an earlier one's artefact (target).
CREATE TABLE paper_links (
    source_id text COLLATE "C" NOT NULL,
    target_id text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    day text COLLATE "C" NOT NULL,                        -- the source's announcement day
    similarity double precision NOT NULL,
    status text COLLATE "C" NOT NULL CHECK (status IN ('linked', 'ambiguous')),
    alternatives text NOT NULL DEFAULT '[]',  -- JSON list of other origins it could mean
    PRIMARY KEY (source_id, target_id, name)
);
CREATE INDEX paper_links_target ON paper_links(target_id, day);

-- The linker's counters between runs: uses of a name no artefact explains ('refs'), uses of
-- an artefact in its first week ('young', by artefact key), names withdrawn as old ('old').
CREATE TABLE link_counts (
    kind text COLLATE "C" NOT NULL CHECK (kind IN ('refs', 'young', 'old')),
    key text COLLATE "C" NOT NULL,
    value integer NOT NULL,
    PRIMARY KEY (kind, key)
);

CREATE TABLE link_meta (
    key text COLLATE "C" PRIMARY KEY,
    value text COLLATE "C" NOT NULL
);

-- Threads: an origin with its follow-ups and the papers close to them in meaning and time.
CREATE TABLE threads (
    id text COLLATE "C" PRIMARY KEY,                      -- NAME-ORIGINID
    name text COLLATE "C" NOT NULL,
    origin_id text COLLATE "C" NOT NULL,
    day text COLLATE "C" NOT NULL,                        -- the origin's day
    last_day text COLLATE "C" NOT NULL,                   -- the newest member's day
    size integer NOT NULL,
    updated_at text COLLATE "C" NOT NULL
);
CREATE INDEX threads_last_day ON threads(last_day);

CREATE TABLE thread_members (
    thread_id text COLLATE "C" NOT NULL,
    paper_id text COLLATE "C" NOT NULL,
    role text COLLATE "C" NOT NULL CHECK (role IN ('origin', 'followup', 'close')),
    score double precision NOT NULL,
    day text COLLATE "C" NOT NULL,
    PRIMARY KEY (thread_id, paper_id)
);
CREATE INDEX thread_members_paper ON thread_members(paper_id);
CREATE INDEX thread_members_day ON thread_members(day);

-- One topic's ISO week: the page's whole dict, and a hash of what it was built from.
CREATE TABLE briefs (
    topic_id bigint NOT NULL,
    week text COLLATE "C" NOT NULL,                       -- 2026-W07
    payload text NOT NULL,                    -- JSON
    writer text NOT NULL,
    input_hash text COLLATE "C" NOT NULL,
    built_at text COLLATE "C" NOT NULL,
    PRIMARY KEY (topic_id, week)
);
CREATE INDEX briefs_week ON briefs(week);

-- A reader may follow a thread ('thread:ID') as a topic.
ALTER TABLE follows DROP CONSTRAINT follows_kind_check;
ALTER TABLE follows ADD CONSTRAINT follows_kind_check
    CHECK (kind IN ('topic', 'section', 'author', 'category', 'search', 'thread'));
