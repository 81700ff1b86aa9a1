-- postings_read (migration 0017) leaves out the build's lists the caller holds in memory
-- (`held`, of `cached_build`; store/postings.py keeps a build's decoded lists, since a build
-- never changes): their bytes are neither read out of TOAST nor sent again, and they do not
-- count toward the `most` postings the statement takes along.
DROP FUNCTION postings_read(text[], bigint, integer, integer, integer);
CREATE FUNCTION postings_read(tokens text[], most bigint, cached_build integer,
                              cached_tail_build integer, cached_tail_version integer,
                              held text[])
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
          FROM (SELECT l.lexeme, l.papers,
                       sum(CASE WHEN l.lexeme = ANY(held) THEN 0 ELSE l.papers END)
                           OVER (ORDER BY l.papers, l.lexeme) AS run
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
                      AND k.term = ANY(tokens) AND k.term <> ALL(c.unlisted)
                      AND NOT (i.build = cached_build AND k.term = ANY(held))) b,
             LATERAL (SELECT array_agg(t.term), array_agg(t.pk), array_agg(t.counts),
                             array_agg(tp.length)
                      FROM keyword_tail t JOIN keyword_tail_papers tp ON tp.pk = t.pk
                      WHERE t.term = ANY(tokens)) t) s ON true;
END $$;
