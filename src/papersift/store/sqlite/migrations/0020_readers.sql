-- Readers: accounts, sessions, what each one follows, rates, saves and asks for, and what was shown.
-- Every row of a reader's own data names its reader; removing a reader deletes them all (the
-- store does it in one transaction: foreign keys stay off, a bulk load would pay for their checks).
CREATE TABLE readers (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE COLLATE NOCASE,  -- the login name, also shown
    email TEXT,
    password_hash TEXT NOT NULL,               -- argon2id, with its parameters and salt
    created_at TEXT NOT NULL,
    last_seen_at TEXT,
    signals_version INTEGER NOT NULL DEFAULT 0  -- moves with every change of the reader's signals
);

-- A session is a random token in a signed cookie; only its SHA-256 is kept here.
CREATE TABLE reader_sessions (
    token_hash TEXT PRIMARY KEY,
    reader_id INTEGER NOT NULL,
    csrf_token TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX reader_sessions_reader ON reader_sessions(reader_id);

-- Failed logins by key ('name:ada', 'ip:127.0.0.1'), for rate limiting.
CREATE TABLE login_failures (
    key TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE INDEX login_failures_key ON login_failures(key, at);

-- Invitations (when sign-up is by invitation): only the code's SHA-256 is kept.
CREATE TABLE invitations (
    code_hash TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_by INTEGER,
    used_at TEXT
);

-- kind: topic (slug), section (slug), author (slug), category ('cs.LG'), search (a query).
CREATE TABLE follows (
    reader_id INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('topic', 'section', 'author', 'category', 'search')),
    value TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (reader_id, kind, value)
);

-- One reaction per reader and paper: up, down, or not interested.
CREATE TABLE reactions (
    reader_id INTEGER NOT NULL,
    paper_id TEXT NOT NULL,
    reaction TEXT NOT NULL CHECK (reaction IN ('up', 'down', 'not_interested')),
    at TEXT NOT NULL,
    PRIMARY KEY (reader_id, paper_id)
);

CREATE TABLE collections (
    id INTEGER PRIMARY KEY,
    reader_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (reader_id, name)
);

CREATE TABLE collection_papers (
    collection_id INTEGER NOT NULL,
    paper_id TEXT NOT NULL,
    added_at TEXT NOT NULL,
    PRIMARY KEY (collection_id, paper_id)
);

-- What a reader wrote in their own words, and the profile entries read from it (or typed).
CREATE TABLE feedback (
    id INTEGER PRIMARY KEY,
    reader_id INTEGER NOT NULL,
    text TEXT NOT NULL,
    at TEXT NOT NULL
);

CREATE TABLE profile_entries (
    id INTEGER PRIMARY KEY,
    reader_id INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('more', 'less', 'exclude')),
    phrase TEXT NOT NULL,
    feedback_id INTEGER,
    created_at TEXT NOT NULL,
    UNIQUE (reader_id, kind, phrase)
);

-- The papers a reader's feed showed, when first (a paper is never shown on a later day).
CREATE TABLE shown (
    reader_id INTEGER NOT NULL,
    paper_id TEXT NOT NULL,
    first_at TEXT NOT NULL,
    PRIMARY KEY (reader_id, paper_id)
);
