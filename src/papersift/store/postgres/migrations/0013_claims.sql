-- Issue 32: "This is me": the authors a reader says they are (private to the reader). Their
-- papers become the reader's liked papers; new ones are the reader's own in the feed.
CREATE TABLE claims (
    reader_id bigint NOT NULL,
    author_slug text COLLATE "C" NOT NULL,
    created_at text COLLATE "C" NOT NULL,
    PRIMARY KEY (reader_id, author_slug)
);
