-- TL;DR and blurb per paper with provenance; a flagged summary is regenerated or hidden.
CREATE TABLE summaries (
    paper_id text COLLATE "C" PRIMARY KEY,
    tldr text NOT NULL,
    blurb text NOT NULL,
    writer text COLLATE "C" NOT NULL,
    model text,
    prompt_version text,
    input_hash text NOT NULL,
    created_at text NOT NULL,
    notes text,
    tokens integer,
    seconds double precision,
    flagged integer NOT NULL DEFAULT 0,
    flag_reason text,
    hidden integer NOT NULL DEFAULT 0
);
