"""The failure encyclopedia: entry schema, loader and static checks (imports nothing of index/ or
bot/)."""
