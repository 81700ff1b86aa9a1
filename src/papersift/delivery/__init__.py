"""Delivery: reaching readers where they read (email digests, one-click links, private feeds, their data exported)."""
