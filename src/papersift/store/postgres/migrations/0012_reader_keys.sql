-- Issue 30: an account's links never reach another account. Identity columns never hand an id
-- out twice; each reader also gets a random link key that every emailed link carries, so a
-- link made for one account is refused by every other, whatever the ids.
ALTER TABLE readers ADD COLUMN link_key text NOT NULL
    DEFAULT replace(gen_random_uuid()::text, '-', '');

-- A login attempt is counted before its password is checked (one transaction with the check of
-- the limit), under a random attempt token; a right password takes its own marks back.
ALTER TABLE login_failures ADD COLUMN attempt text;

-- A digest is claimed by one `digest send` at a time (until claimed_until), so runs that
-- overlap (cron and `serve --digest-at`) never send it twice.
ALTER TABLE digests ADD COLUMN claimed_by text;
ALTER TABLE digests ADD COLUMN claimed_until text COLLATE "C";
