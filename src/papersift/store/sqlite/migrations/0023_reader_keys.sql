-- Issue 30: an account's id and links never reach another account.
-- Reader ids are never handed out twice (AUTOINCREMENT): without it a removed reader's id went
-- to the next account, and with it the removed reader's emailed links. Each reader also gets a
-- random link key that every emailed link carries, so a link made for one account is refused
-- by every other, whatever the ids.
CREATE TABLE readers_keyed (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE COLLATE NOCASE,
    email TEXT,
    password_hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    last_seen_at TEXT,
    signals_version INTEGER NOT NULL DEFAULT 0,
    link_key TEXT NOT NULL DEFAULT (lower(hex(randomblob(16))))
);
INSERT INTO readers_keyed(id, name, email, password_hash, created_at, last_seen_at,
                          signals_version)
    SELECT id, name, email, password_hash, created_at, last_seen_at, signals_version FROM readers;
DROP TABLE readers;
ALTER TABLE readers_keyed RENAME TO readers;
-- Ids that rows still name (of readers removed before this migration) are not handed out either.
INSERT INTO sqlite_sequence(name, seq) SELECT 'readers', 0
    WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'readers');
UPDATE sqlite_sequence SET seq = max(seq, (SELECT max(coalesce(n, 0)) FROM (
    SELECT max(id) AS n FROM readers UNION ALL SELECT max(used_by) FROM invitations
    UNION ALL SELECT max(reader_id) FROM digests UNION ALL SELECT max(reader_id) FROM used_links)))
    WHERE name = 'readers';

-- A login attempt is counted before its password is checked (one transaction with the check of
-- the limit), under a random attempt token; a right password takes its own marks back.
ALTER TABLE login_failures ADD COLUMN attempt TEXT;

-- A digest is claimed by one `digest send` at a time (until claimed_until), so runs that
-- overlap (cron and `serve --digest-at`) never send it twice.
ALTER TABLE digests ADD COLUMN claimed_by TEXT;
ALTER TABLE digests ADD COLUMN claimed_until TEXT;
