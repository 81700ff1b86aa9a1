"""The news site: server-rendered pages with JSON twins, Atom feeds and a static export."""
