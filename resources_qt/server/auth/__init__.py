"""`serve` as an OAuth 2.1 resource server: token checks, RFC 9728 metadata, 401/403, per-resource scopes.

Import the modules themselves (`gate`, `keys`, `verifier`, `visibility`, `access`): `visibility` is light
(the window's preview reads as a scope set through it), the others load the SDK's auth stack.
"""
