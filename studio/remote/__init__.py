"""The Remote page: the studio as a client of any MCP server (connect, browse, read, subscribe, import)."""
