-- Delivery: each reader's digest schedule and private feed token, the digests made and sent,
-- the papers sent (never twice), and the one-click links already used.
CREATE TABLE delivery_settings (
    reader_id INTEGER PRIMARY KEY,
    schedule TEXT NOT NULL DEFAULT 'daily' CHECK (schedule IN ('daily', 'weekly', 'off')),
    days TEXT NOT NULL DEFAULT 'mon',         -- weekly: the days, e.g. 'mon,thu'
    paused INTEGER NOT NULL DEFAULT 0,
    feed_token_hash TEXT UNIQUE              -- SHA-256 of the private feed's token
);

-- A digest is recorded before it is sent (pending) and marked sent only once the SMTP server
-- accepted it; a failed one is tried again by the next run.
CREATE TABLE digests (
    id INTEGER PRIMARY KEY,
    reader_id INTEGER NOT NULL,
    day TEXT NOT NULL,                        -- the day it is for (YYYY-MM-DD)
    message_id TEXT NOT NULL,
    papers TEXT NOT NULL,                     -- JSON list of paper ids, in order
    status TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    created_at TEXT NOT NULL,
    sent_at TEXT,
    UNIQUE (reader_id, day)
);

CREATE TABLE digest_papers (
    reader_id INTEGER NOT NULL,
    paper_id TEXT NOT NULL,
    digest_id INTEGER NOT NULL,
    PRIMARY KEY (reader_id, paper_id)
);

CREATE TABLE used_links (
    nonce TEXT PRIMARY KEY,
    reader_id INTEGER NOT NULL,
    used_at TEXT NOT NULL
);
