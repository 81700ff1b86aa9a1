"""A reader's ranked feed: features of papers, a model of one reader, the feed with its reasons, and its evaluation."""
