"""Commands of the summaries stage: summarize, flag, eval tldr."""
