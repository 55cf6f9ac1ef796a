"""A resource declaration (direct URI or URI template), its reader, and the fluent builder."""

from __future__ import annotations

import asyncio
import copy
import inspect
import re
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from types import FunctionType
from typing import TYPE_CHECKING, Any, Literal, cast

from mcp.shared.uri_template import UriTemplate

from resources_qt.content import ResourceContent, to_contents
from resources_qt.errors import NotFound, ReaderFailedError, ReaderMissingError, ResourceNotFoundError, ValidationError
from resources_qt.templates import CompiledTemplate, compile_template, unsafe_value

if TYPE_CHECKING:
    import mcp_types as types

    from resources_qt.collection import Resources

__all__ = [
    "Annotations",
    "CacheHint",
    "Completer",
    "Icon",
    "Reader",
    "Resource",
    "ResourceBuilder",
]

Reader = Callable[..., object | Awaitable[object]]
"""`reader(uri)` or `reader(uri, params)`, plain or async; see `Resource.read`."""

Completer = Sequence[str] | Callable[..., Sequence[str] | Awaitable[Sequence[str]]]
"""Completion values of one template variable: a static list or `complete(name, value, context)`."""

Audience = Literal["user", "assistant"]


@dataclass(frozen=True, slots=True)
class Icon:
    """An icon variant a client may show beside the resource."""

    src: str
    mime_type: str | None = None
    sizes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.src, str) or not self.src.strip():
            raise ValidationError("Icon source must not be empty")
        # Accept "24x24 48x48" or a list too; store a tuple so the icon stays hashable.
        if isinstance(self.sizes, str):
            object.__setattr__(self, "sizes", tuple(self.sizes.split()))
        elif isinstance(self.sizes, list):
            object.__setattr__(self, "sizes", tuple(self.sizes))
        if self.mime_type is not None and not isinstance(self.mime_type, str):
            raise ValidationError(f"Icon MIME type must be a str, not {type(self.mime_type).__name__}")
        if any(not isinstance(size, str) or not size for size in self.sizes):
            raise ValidationError(f"Icon sizes must be non-empty strings like '24x24', not {self.sizes!r}")

    def to_mcp(self) -> types.Icon:
        import mcp_types as types  # the window needs no SDK models before its first paint

        return types.Icon(src=self.src, mime_type=self.mime_type or None, sizes=list(self.sizes) or None)


@dataclass(frozen=True, slots=True)
class Annotations:
    """Hints for the client: who the resource is for, how important, when it last changed."""

    audience: tuple[Audience, ...] = ()
    priority: float | None = None
    last_modified: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.audience, str):
            raise ValidationError(
                f"Annotation audience must be a list of roles, not the string {self.audience!r}"
            )
        if isinstance(self.audience, list):
            object.__setattr__(self, "audience", tuple(self.audience))
        for role in self.audience:
            if role not in ("user", "assistant"):
                raise ValidationError(f"Annotation audience must be 'user' or 'assistant', not {role!r}")
        if self.priority is not None and (
            isinstance(self.priority, bool) or not isinstance(self.priority, int | float)
        ):
            raise ValidationError(f"Annotation priority must be a number, not {type(self.priority).__name__}")
        if self.last_modified is not None and not isinstance(self.last_modified, str):
            raise ValidationError(
                f"Annotation last_modified must be an ISO 8601 str, not {type(self.last_modified).__name__}"
            )
        if self.priority is not None and not 0.0 <= self.priority <= 1.0:
            raise ValidationError(f"Annotation priority must be between 0 and 1, not {self.priority}")

    @property
    def is_empty(self) -> bool:
        return not self.audience and self.priority is None and not self.last_modified

    def to_mcp(self) -> types.Annotations:
        import mcp_types as types

        return types.Annotations(
            audience=list(self.audience) or None,
            priority=self.priority,
            last_modified=self.last_modified or None,
        )


@dataclass(frozen=True, slots=True)
class CacheHint:
    """A 2026-07-28 cache hint: how long a client may reuse a result, and for whom."""

    ttl_ms: int
    scope: Literal["public", "private"] = "private"

    def __post_init__(self) -> None:
        if isinstance(self.ttl_ms, bool) or not isinstance(self.ttl_ms, int):
            raise ValidationError(f"Cache ttl_ms must be an int, not {type(self.ttl_ms).__name__}")
        if self.ttl_ms < 0:
            raise ValidationError(f"Cache ttl_ms must not be negative, not {self.ttl_ms}")
        if self.scope not in ("public", "private"):
            raise ValidationError(f"Cache scope must be 'public' or 'private', not {self.scope!r}")


def _reader_arity(reader: Reader) -> int:
    """1 for the seed's `reader(uri)`, 2 for `reader(uri, params)`."""
    shape = _code_shape(reader) or _signature_shape(reader)
    if shape is None:
        return 2  # no signature to read (a builtin): it is called as reader(uri, params)
    positional, varargs = shape
    if varargs or positional >= 2:
        return 2
    if positional == 1:
        return 1
    raise ValidationError("A reader takes the URI, or the URI and the template parameters")


def _code_shape(reader: Reader) -> tuple[int, bool] | None:
    """Positional parameters and *args from the code object, for a plain function or a class whose
    `__call__` is one (a snippet's reader): inspect.signature costs ~15-25 us, paid for every resource
    of a project as it opens. None when only a signature can tell (wrapped or re-signed callables)."""
    if hasattr(reader, "__wrapped__") or hasattr(reader, "__signature__"):
        return None
    if type(reader) is FunctionType:
        code, skipped = reader.__code__, 0
    elif type(call := type(reader).__call__) is FunctionType:
        code, skipped = call.__code__, 1  # self
    else:
        return None
    return code.co_argcount - skipped, bool(code.co_flags & inspect.CO_VARARGS)


def _signature_shape(reader: Reader) -> tuple[int, bool] | None:
    try:
        parameters = inspect.signature(reader).parameters.values()
    except (TypeError, ValueError):
        return None
    positional = sum(
        p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in parameters
    )
    return positional, any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters)


_UNSAFE_URI_CHAR = re.compile(r"[\s\x00-\x1f\x7f]")
URI_SAFE = ":/?#[]@!$&'()*+,;=%{}~-._"
"""What percent-encoding of a non-ASCII address leaves alone: RFC 3986's reserved characters, `%` and braces."""
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")

_IDENTITY = frozenset({"name", "uri", "uri_template"})


class Resource:
    """One declared resource: a direct `uri` or a `uri_template`, never both.

    Mutable like the seed's collection items; `Resources` re-indexes when a
    resource it holds changes its name, URI or template, but such an in-place
    edit does not count as a change of the list (send the server's
    `notify(ListChanged())` yourself).
    """

    def __init__(
        self,
        *,
        name: str = "",
        uri: str = "",
        uri_template: str = "",
        title: str = "",
        description: str = "",
        mime_type: str = "",
        icons: Sequence[Icon] = (),
        annotations: Annotations | None = None,
        size: int | None = None,
        reader: Reader | None = None,
        completions: Mapping[str, Completer] | None = None,
        cache: CacheHint | None = None,
        meta: Mapping[str, Any] | None = None,
        unchecked_values: bool = False,
    ) -> None:
        self._owner: Resources | None = None
        self._compiled: CompiledTemplate | None = None
        self._reader: Reader | None = None
        self._arity = 2
        self._is_async = False
        self.name = name
        self.uri = uri
        self.uri_template = uri_template
        self.title = title
        self.description = description
        self.mime_type = mime_type
        self.icons: list[Icon] = list(icons)
        self.annotations = annotations
        self.size = size
        self.reader = reader
        self.completions: dict[str, Completer] = dict(completions or {})
        self.cache = cache
        self.meta: dict[str, Any] = dict(meta or {})
        # Template values reach the reader only when safe (templates.unsafe_value)
        # unless the resource opts out, for templates that really take paths.
        self.unchecked_values = unchecked_values

    @staticmethod
    def builder() -> ResourceBuilder:
        """A fluent builder; `build()` validates before it returns."""
        return ResourceBuilder()

    def __setattr__(self, key: str, value: Any) -> None:
        object.__setattr__(self, key, value)
        if key in _IDENTITY:
            if key == "uri_template":
                object.__setattr__(self, "_compiled", None)
            owner = self.__dict__.get("_owner")
            if owner is not None:
                owner._identity_changed(self)

    @property
    def is_template(self) -> bool:
        """True when a URI template is set; it decides which list the resource appears in."""
        return bool(self.uri_template)

    @property
    def reader(self) -> Reader | None:
        return self._reader

    @reader.setter
    def reader(self, fn: Reader | None) -> None:
        if fn is not None and not callable(fn):
            raise ValidationError(f"Reader must be callable, not {type(fn).__name__}")
        self._arity = _reader_arity(fn) if fn is not None else 2
        self._is_async = fn is not None and (
            inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)
        )
        self._reader = fn

    @property
    def key(self) -> str:
        """The URI or template: what the resource is addressed by."""
        return self.uri_template or self.uri

    @property
    def compiled_template(self) -> CompiledTemplate:
        """The parsed template (parsed once, raises `ValidationError` when invalid)."""
        if self._compiled is None:
            object.__setattr__(self, "_compiled", compile_template(self.uri_template))
        assert self._compiled is not None
        return self._compiled

    def validate(self) -> None:
        """Raise `ValidationError` (-32602) naming the first problem of the declaration."""
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValidationError("Resource name must not be empty")
        label = f"Resource {self.name!r}"
        for attr in ("uri", "uri_template", "title", "description", "mime_type"):
            value = getattr(self, attr)
            if not isinstance(value, str):
                raise ValidationError(f"{label}: {attr} must be a str, not {type(value).__name__}")
        if self.size is not None and (isinstance(self.size, bool) or not isinstance(self.size, int)):
            raise ValidationError(f"{label}: size must be an int, not {type(self.size).__name__}")
        if self.uri and self.uri_template:
            raise ValidationError(f"{label}: Cannot set both URI and URITemplate")
        if not self.uri and not self.uri_template:
            raise ValidationError(f"{label} needs a URI or a URI template")
        if self.uri and not self.uri.strip():
            raise ValidationError(f"{label}: URI must not be blank")
        for kind, value in (("URI", self.uri), ("URI template", self.uri_template)):
            bad = _UNSAFE_URI_CHAR.search(value)
            if bad:
                raise ValidationError(
                    f"{label}: {kind} {value!r} contains {bad.group()!r} at character {bad.start() + 1}; "
                    "spaces and control characters must be percent-encoded (a space is %20)"
                )
        for kind, attr in (("URI", "uri"), ("URI template", "uri_template")):
            value = getattr(self, attr)
            if not value.isascii():
                # One rule: MCP lists a uri with JSON Schema's "uri" format, which is ASCII only, so a
                # non-ASCII address is refused with the percent-encoded form that means the same.
                encoded = urllib.parse.quote(value, safe=URI_SAFE)
                raise ValidationError(
                    f"{label}: {kind} {value!r} has non-ASCII characters; write it percent-encoded: {encoded}",
                    field=attr,
                )
        if self.uri and not _SCHEME.match(self.uri):
            # MCP lists a resource's uri as an absolute URI, so a client needs the scheme.
            raise ValidationError(
                f"{label}: URI {self.uri!r} has no scheme; write it as scheme:..., e.g. config://app/{self.uri}"
            )
        if not self.uri_template and UriTemplate.is_template(self.uri):
            # Braces are not legal in a URI; this is a template declared in the wrong list.
            raise ValidationError(
                f"{label}: URI {self.uri!r} looks like a template; declare it as uri_template"
            )
        if self.uri_template:
            try:
                compiled = self.compiled_template
            except ValidationError as exc:
                raise ValidationError(f"{label}: {exc.message}") from exc
            unknown = set(self.completions) - set(compiled.variable_names)
            if unknown:
                raise ValidationError(
                    f"{label}: completions name unknown variable(s) {', '.join(sorted(unknown))}"
                )
        elif self.completions:
            raise ValidationError(f"{label}: completions need a URI template")
        if self._reader is None:
            raise ValidationError(f"{label} has no reader")
        if self.size is not None and self.size < 0:
            raise ValidationError(f"{label}: size must not be negative")

    def copy(self) -> Resource:
        """A detached copy (same reader); what `Resources.add_resource` stores."""
        dup = copy.copy(self)
        object.__setattr__(dup, "_owner", None)
        dup.icons = list(self.icons)
        dup.completions = dict(self.completions)
        dup.meta = dict(self.meta)
        return dup

    def check_values(self, params: Mapping[str, Any], *, uri: str = "") -> None:
        """Refuse template values a reader should not get unchecked (see `templates.unsafe_value`).

        Raises:
            ValidationError: -32602 naming the variable and what is wrong with
                its value; `data` carries the URI and the variable.
        """
        found = unsafe_value(self.compiled_template, params)
        if found is not None:
            variable, why = found
            raise ValidationError(
                f"Template variable {variable!r} of {self.uri_template!r} {why}; refused "
                "(a resource that takes such values sets unchecked_values)",
                field=variable,
                data={"uri": uri, "variable": variable},
            )

    async def read(self, uri: str, params: Mapping[str, Any] | None = None) -> list[ResourceContent]:
        """Call the reader for the concrete `uri` and convert its result.

        A plain (non-async) reader runs in a worker thread, so a slow one
        does not hold up the event loop, and with it every other session.

        Raises:
            ValidationError: a template value is unsafe (-32602, see
                `check_values`), unless `unchecked_values` is set.
            ReaderMissingError: no reader is assigned (-32603).
            ReaderFailedError: the reader raised (its message wrapped) or
                returned nothing usable (-32000).
        """
        if params and self.uri_template and not self.unchecked_values:
            self.check_values(params, uri=uri)
        reader = self._reader
        if reader is None:
            raise ReaderMissingError(f"Resource {self.name!r} has no reader", data={"uri": uri})
        args: tuple[Any, ...] = (uri,) if self._arity == 1 else (uri, dict(params or {}))
        try:
            result = reader(*args) if self._is_async else await asyncio.to_thread(reader, *args)
            if inspect.isawaitable(result):
                result = await result
        except (ReaderFailedError, ReaderMissingError):
            # Already in the contract's words (the snippet pool raises these).
            raise
        except NotFound as exc:
            # Said on purpose: nothing exists at this URI. Any other not-found error from inside a reader
            # (looking up another URI, say) is a reader failure, not a lookup problem of the client's.
            raise ResourceNotFoundError(uri, code=exc.code, message=exc.reason) from exc
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise ReaderFailedError(
                f"Resource reader failed for URI {uri}: {type(exc).__name__}: {exc}", data={"uri": uri}
            ) from exc
        return to_contents(result, uri=uri, mime_type=self.mime_type)

    def listing_fields(self) -> dict[str, Any]:
        """What the listing entry says, as plain values (icons and annotations as declared): equal for two
        resources exactly when their `to_mcp()` entries are, without the SDK's models (an edit in the
        window compares listings on the GUI thread, which must not wait for `mcp_types` to load)."""
        fields: dict[str, Any] = {
            "name": self.name,
            "title": self.title or None,
            "description": self.description or None,
            "mime_type": self.mime_type or None,
            "icons": self.icons or None,
            "annotations": self.annotations if self.annotations and not self.annotations.is_empty else None,
            "_meta": self.meta or None,
        }
        if self.is_template:
            fields["uri_template"] = self.uri_template
        else:
            fields["uri"] = self.uri
            fields["size"] = self.size
        return fields

    def to_mcp(self) -> types.Resource | types.ResourceTemplate:
        """The listing entry: a `Resource` for a direct URI, a `ResourceTemplate` otherwise."""
        import mcp_types as types

        fields = self.listing_fields()
        fields["icons"] = [icon.to_mcp() for icon in self.icons] or None
        if fields["annotations"] is not None:
            fields["annotations"] = fields["annotations"].to_mcp()
        if self.is_template:
            return types.ResourceTemplate(**fields)
        return types.Resource(**fields)

    def __repr__(self) -> str:
        kind = "template" if self.is_template else "uri"
        return f"Resource(name={self.name!r}, {kind}={self.key!r})"


class ResourceBuilder:
    """Fluent builder of a `Resource`; every method returns the builder."""

    def __init__(self) -> None:
        self._resource = Resource()

    def name(self, name: str) -> ResourceBuilder:
        self._resource.name = name
        return self

    def title(self, title: str) -> ResourceBuilder:
        self._resource.title = title
        return self

    def description(self, description: str) -> ResourceBuilder:
        self._resource.description = description
        return self

    def uri(self, uri: str) -> ResourceBuilder:
        if self._resource.uri_template:
            raise ValidationError("Cannot set both URI and URITemplate")
        if not uri:
            raise ValidationError("URI must not be empty")
        self._resource.uri = uri
        return self

    def uri_template(self, uri_template: str) -> ResourceBuilder:
        if self._resource.uri:
            raise ValidationError("Cannot set both URI and URITemplate")
        if not uri_template:
            raise ValidationError("URI template must not be empty")
        self._resource.uri_template = uri_template
        return self

    def mime_type(self, mime_type: str) -> ResourceBuilder:
        self._resource.mime_type = mime_type
        return self

    def add_icon(
        self, src: str, mime_type: str | None = None, sizes: str | Sequence[str] | None = None
    ) -> ResourceBuilder:
        """Append an icon variant; several calls declare several icons."""
        if isinstance(sizes, str):
            sizes = sizes.split()
        self._resource.icons.append(Icon(src, mime_type, tuple(sizes or ())))
        return self

    def annotations(
        self,
        *,
        audience: Sequence[Audience] = (),
        priority: float | None = None,
        last_modified: str | None = None,
    ) -> ResourceBuilder:
        # A bare string stays whole so Annotations can say what is wrong with it.
        roles = audience if isinstance(audience, str) else tuple(audience)
        self._resource.annotations = Annotations(cast(Any, roles), priority, last_modified)
        return self

    def size(self, size: int) -> ResourceBuilder:
        self._resource.size = size
        return self

    def completion(self, variable: str, values: Completer) -> ResourceBuilder:
        """Completion values for one template variable (a list or a callable)."""
        self._resource.completions[variable] = values
        return self

    def cache(self, ttl_ms: int, scope: Literal["public", "private"] = "private") -> ResourceBuilder:
        self._resource.cache = CacheHint(ttl_ms, scope)
        return self

    def reader(self, fn: Reader) -> ResourceBuilder:
        self._resource.reader = fn
        return self

    def build(self) -> Resource:
        """Validate and hand over the resource; the builder starts afresh afterwards."""
        resource = self._resource
        resource.validate()
        self._resource = Resource()
        return resource
