"""The diagnosis pipeline (ingest -> triage -> match -> decide -> render) and its surfaces."""
