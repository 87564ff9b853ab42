"""The Slack surface: app factory (app.py), handlers, dedup middleware, file downloads, serve."""
