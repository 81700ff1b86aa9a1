-- papersift's own keyword postings (store/postgres/postings.py), as on SQLite (its migration
-- 0022): keyword search scored each match's tsvector out of TOAST with one ts_rank_cd per
-- word (~35 µs a match); these lists hold, per lexeme, its papers and its count in each
-- weight class (A title, B abstract, C authors), read whole and scored in numpy with the
-- same formula and statistics. A build copies the tsvectors as of one snapshot; papers
-- changed since go to the tail when the keywords stage runs, papers added since are ranked
-- by the tsvector query. The row below exists once a build was asked for; from then on the
-- trigger logs every text change.
CREATE TABLE keyword_index (
    id integer PRIMARY KEY CHECK (id = 1),
    build integer NOT NULL DEFAULT 0,
    watermark bigint NOT NULL DEFAULT 0,
    tail_watermark bigint NOT NULL DEFAULT 0,
    tail_version integer NOT NULL DEFAULT 0,
    papers bigint NOT NULL DEFAULT 0,
    lengths bytea,                    -- int32 length of each paper (its text's bytes), by pk
    built_at text
);

CREATE TABLE keyword_postings (
    build integer NOT NULL,
    term text COLLATE "C" NOT NULL,
    pks bytea NOT NULL,               -- int32 pks, ascending (big-endian)
    counts bytea NOT NULL,            -- int32 per paper (big-endian): A << 16 | B << 8 | C
    PRIMARY KEY (build, term)
);

CREATE TABLE keyword_tail_papers (
    pk bigint PRIMARY KEY,
    length integer NOT NULL           -- 0: deleted
);
CREATE TABLE keyword_tail (
    term text COLLATE "C" NOT NULL,
    pk bigint NOT NULL,
    counts integer NOT NULL,          -- A << 16 | B << 8 | C
    PRIMARY KEY (term, pk)
);
CREATE INDEX keyword_tail_pk ON keyword_tail (pk);

CREATE TABLE keyword_changed (
    seq bigserial PRIMARY KEY,
    pk bigint NOT NULL
);

CREATE FUNCTION keyword_changed_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM keyword_index) THEN
        INSERT INTO keyword_changed (pk)
        VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.pk ELSE NEW.pk END);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER keyword_changed_update AFTER UPDATE OF title, abstract, authors_text ON papers
FOR EACH ROW WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.abstract IS DISTINCT FROM
                   NEW.abstract OR OLD.authors_text IS DISTINCT FROM NEW.authors_text)
EXECUTE FUNCTION keyword_changed_log();
CREATE TRIGGER keyword_changed_delete AFTER DELETE ON papers
FOR EACH ROW EXECUTE FUNCTION keyword_changed_log();
