"""Upstreams: imported resources read through another MCP server, so `serve` proxies them (client mode)."""

from resources_qt.upstream.binding import bind_upstreams, upstream_or
from resources_qt.upstream.connection import UpstreamConnection, Upstreams

__all__ = ["UpstreamConnection", "Upstreams", "bind_upstreams", "upstream_or"]
