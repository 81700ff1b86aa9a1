"""Commands of the search stage: embed, search, eval search."""
