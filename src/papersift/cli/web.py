"""Commands of the site: serve, build, update."""
