-- The keyword index's vocabulary: every lexeme with the number of papers that hold it (as
-- ts_stat's ndoc counts them: duplicates too), kept current by triggers on papers in the
-- transaction that writes them. A prefix* query reads its words from here in word order, and
-- a word's document count is one key lookup: a GIN index cannot be walked in word order, and
-- reading the vocabulary out of every stored tsvector (ts_stat) took ~1 s per 30,000 papers,
-- in a reader's request, each time the store had grown by 2,000 papers.
CREATE TABLE lexicon (
    lexeme text COLLATE "C" PRIMARY KEY,
    papers integer NOT NULL
);
INSERT INTO lexicon (lexeme, papers) SELECT word, ndoc FROM ts_stat('SELECT fts FROM papers');

-- Counts move by the difference between the rows before and after a statement (transition
-- tables are seen only by the trigger's own function, hence one per event). Lexemes are
-- written in order, so two writers lock the rows they share in the same order (no deadlock);
-- a lexeme no paper holds any more is removed (in a second statement: it sees the first's
-- writes), looked for only among those whose count fell.
CREATE FUNCTION lexicon_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lexicon AS l (lexeme, papers)
    SELECT u.lexeme, count(*) FROM new_rows r, unnest(r.fts) u GROUP BY u.lexeme ORDER BY 1
    ON CONFLICT (lexeme) DO UPDATE SET papers = l.papers + excluded.papers;
    RETURN NULL;
END $$;

CREATE FUNCTION lexicon_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    fallen text[];
BEGIN
    WITH written AS (
        INSERT INTO lexicon AS l (lexeme, papers)
        SELECT u.lexeme, -count(*) FROM old_rows r, unnest(r.fts) u GROUP BY u.lexeme
        ORDER BY 1
        ON CONFLICT (lexeme) DO UPDATE SET papers = l.papers + excluded.papers
        RETURNING l.lexeme, l.papers)
    SELECT array_agg(lexeme) INTO fallen FROM written WHERE papers <= 0;
    DELETE FROM lexicon WHERE lexeme = ANY(fallen) AND papers <= 0;
    RETURN NULL;
END $$;

-- Only rows whose text changed count (most updates set a date or a duplicate link).
CREATE FUNCTION lexicon_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    fallen text[];
BEGIN
    WITH delta AS (
        SELECT lexeme, sum(n) AS n FROM (
            SELECT u.lexeme, 1 AS n FROM new_rows r JOIN old_rows o ON o.pk = r.pk,
                unnest(r.fts) u WHERE r.fts IS DISTINCT FROM o.fts
            UNION ALL
            SELECT u.lexeme, -1 FROM old_rows o JOIN new_rows r ON r.pk = o.pk,
                unnest(o.fts) u WHERE r.fts IS DISTINCT FROM o.fts) c
        GROUP BY lexeme),
    written AS (
        INSERT INTO lexicon AS l (lexeme, papers)
        SELECT lexeme, n FROM delta WHERE n <> 0 ORDER BY lexeme
        ON CONFLICT (lexeme) DO UPDATE SET papers = l.papers + excluded.papers
        RETURNING l.lexeme, l.papers)
    SELECT array_agg(lexeme) INTO fallen FROM written WHERE papers <= 0;
    DELETE FROM lexicon WHERE lexeme = ANY(fallen) AND papers <= 0;
    RETURN NULL;
END $$;

CREATE TRIGGER papers_lexicon_insert AFTER INSERT ON papers
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION lexicon_after_insert();
CREATE TRIGGER papers_lexicon_update AFTER UPDATE ON papers
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION lexicon_after_update();
CREATE TRIGGER papers_lexicon_delete AFTER DELETE ON papers
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION lexicon_after_delete();
