-- What a keyword search reads of its words in one statement (store/postgres/postings.py,
-- KeywordPostings._read): their paper counts, the store's size (its highest pk), the
-- postings' state, the duplicates, the build's lengths and changed papers unless the caller
-- has this state's (cached_*), the words' build lists but those past the rarest `most`
-- postings, and the tail's rows. A function, so that the server plans it once per connection:
-- planned at each call the statement took 0.62 ms, planned once 0.25 ms (30,000 papers).
CREATE FUNCTION postings_read(tokens text[], most bigint, cached_build integer,
                              cached_tail_build integer, cached_tail_version integer)
RETURNS TABLE (lexemes text[], papers integer[], unlisted text[], size bigint,
               build integer, watermark bigint, tail_watermark bigint, tail_version integer,
               built bigint, duplicates bigint[], lengths bytea, changed bigint[],
               terms text[], pks bytea[], counts bytea[],
               tail_terms text[], tail_pks bigint[], tail_counts integer[], tail_lengths integer[])
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT c.*, (SELECT coalesce(max(p.pk), 0) FROM papers p), s.*
    FROM (SELECT array_agg(r.lexeme), array_agg(r.papers),
                 coalesce(array_agg(r.lexeme) FILTER (WHERE r.run > most), '{}')
          FROM (SELECT l.lexeme, l.papers, sum(l.papers) OVER (ORDER BY l.papers, l.lexeme) AS run
                FROM lexicon l WHERE l.lexeme = ANY(tokens)) r) c (lexemes, papers, unlisted)
    LEFT JOIN LATERAL (
        SELECT i.build, i.watermark, i.tail_watermark, i.tail_version, i.papers,
               ARRAY(SELECT d.pk FROM papers d WHERE d.duplicate_of IS NOT NULL),
               CASE WHEN i.build <> cached_build THEN i.lengths END,
               CASE WHEN (i.build, i.tail_version) <> (cached_tail_build, cached_tail_version)
                    THEN ARRAY(SELECT tp.pk FROM keyword_tail_papers tp
                               WHERE tp.pk <= i.watermark ORDER BY tp.pk) END,
               b.*, t.*
        FROM keyword_index i,
             LATERAL (SELECT array_agg(k.term), array_agg(k.pks), array_agg(k.counts)
                      FROM keyword_postings k WHERE k.build = i.build
                      AND k.term = ANY(tokens) AND k.term <> ALL(c.unlisted)) b,
             LATERAL (SELECT array_agg(t.term), array_agg(t.pk), array_agg(t.counts),
                             array_agg(tp.length)
                      FROM keyword_tail t JOIN keyword_tail_papers tp ON tp.pk = t.pk
                      WHERE t.term = ANY(tokens)) t) s ON true;
END $$;
