"""The lint rules: each one's id, level and help, and the checks of a declaration against what it serves."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from resources_qt.errors import ValidationError
from resources_qt.lint.blocking import blocking_calls
from resources_qt.lint.findings import Finding, Fix, Level
from resources_qt.lint.sniff import (
    Format,
    essence,
    expected_format,
    format_named,
    is_binary_type,
    is_json_type,
    is_text_type,
    sniff,
)
from resources_qt.project import Project, ResourceSpec
from resources_qt.testing.observed import ObservedContent, ObservedRead
from resources_qt.testing.spec import TestSpec

__all__ = [
    "RULES",
    "ReadTarget",
    "Rule",
    "check_read",
    "instances_skeleton",
    "rule",
    "static_findings",
]

_MAX_MESSAGE = 300


@dataclass(frozen=True)
class Rule:
    """One rule: a stable `id`, its default `level`, a one-line `title` and the `help` a reader acts on."""

    id: str
    level: Level
    title: str
    help: str


RULES: tuple[Rule, ...] = (
    Rule("size-mismatch", "warning", "The declared size differs from the bytes served",
         "Clients budget a model's context by `size`. Set it to the bytes the reader serves (the text as UTF-8, "
         "a blob decoded), or leave it out when the size varies."),
    Rule("mime-mismatch", "error", "The declared MIME type does not fit the content",
         "The MIME type decides how a client shows content: JSON must parse, an image's bytes must be that "
         "format, a text type must be served as text and a binary type as a blob. Declare the type the content "
         "really has, or serve content of the declared type."),
    Rule("uri-not-echoed", "warning", "A content's URI is not the URI that was read",
         "Each content of a read should carry the URI the client read, so a template instance identifies itself. "
         "Build contents with the `uri` the reader was given."),
    Rule("template-not-discoverable", "warning", "A template no client can discover",
         "A template with no `instances` and no completions shows nothing to clients that list only resources. "
         "Add an `instances` snippet listing its concrete URIs, or `completions` / `complete` for its variables."),
    Rule("sample-fails", "error", "A sample's read fails and no test expects it",
         "Every sample (and every listed instance) should read. When the failure is the point, declare a "
         "[[tests]] entry for that URI with `expect = { error = CODE }`."),
    Rule("instances-fail", "error", "A template's instances snippet fails",
         "When `instances()` raises, times out or answers something malformed, the template lists no instances. "
         "Fix the snippet so it returns a list of dicts of the template's variables or URIs."),
    Rule("last-modified-stale", "warning", "lastModified is older than a watched file's change",
         "Clients trust `annotations.last_modified` to tell whether they hold the current content. Update it "
         "when the watched files change, or leave it out."),
    Rule("blocking-in-async", "warning", "An async snippet makes a blocking call",
         "An `async def` entry runs on a shared worker beside other reads: a blocking call (`time.sleep`, "
         "`requests`, `subprocess`) holds every one of them up, and past its deadline the worker is killed with "
         "them. Await instead (`asyncio.sleep`, an async client, `asyncio.to_thread`), or make it a plain `def`."),
    Rule("missing-description", "note", "A resource without a description",
         "A model picks resources by their description. Say what the resource holds and when to read it."),
    Rule("fetchable-scheme", "note", "An http(s) URI for content only this server serves",
         "A client or browser may fetch an http(s) URI from the web instead of reading it here, and get "
         "something else or nothing. Use a scheme of your own (`desk://...`)."),
)
_BY_ID = {entry.id: entry for entry in RULES}


def rule(rule_id: str) -> Rule:
    return _BY_ID[rule_id]


@dataclass(frozen=True)
class ReadTarget:
    """One URI to read and what its declaration promises about it.

    `resource` is the `[[resources]]` entry (the template, for a listed instance); `mime_type` and `size` are
    what the listing (or, for a template's sample, the template) declares; `own` is True when the target is a
    direct resource's own URI, so a fix to the resource's keys changes what is declared for it.
    """

    uri: str
    resource: str
    sample: bool
    instance: bool = False
    mime_type: str = ""
    size: int | None = None
    own: bool = False

    @property
    def label(self) -> str:
        if self.own:
            return f"resource {self.resource!r}"
        kind = "sample" if self.sample else "listed instance"
        return f"{kind} {self.uri} of {self.resource!r}"


def _finding(rule_id: str, message: str, *, level: Level | None = None, resource: str | None = None,
             uri: str | None = None, field: str | None = None, fix: Fix | None = None) -> Finding:
    text = " ".join(message.split())
    if len(text) > _MAX_MESSAGE:
        text = text[: _MAX_MESSAGE - 1] + "…"
    return Finding(rule=rule_id, level=level or rule(rule_id).level, message=text, resource=resource, uri=uri,
                   field=field, fix=fix)


def _at(target: ReadTarget, rule_id: str, message: str, *, level: Level | None = None, field: str | None = None,
        fix: Fix | None = None) -> Finding:
    return _finding(rule_id, message, level=level, resource=target.resource, uri=target.uri, field=field, fix=fix)


# -- checks of the declarations alone ---------------------------------------------------


def static_findings(project: Project) -> list[Finding]:
    """What the declarations say without reading anything: discoverability, descriptions, schemes."""
    findings: list[Finding] = []
    scheme = _own_scheme(project.server.name)
    for spec in project.resources:
        kind = "template" if spec.is_template else "resource"
        if spec.is_template and not spec.instances.strip() and not spec.completions and not spec.complete.strip():
            findings.append(_finding(
                "template-not-discoverable",
                f"template {spec.name!r} ({spec.uri_template}) lists no instances and offers no completions: "
                "clients that list only resources never show it",
                resource=spec.name, field="instances",
                fix=Fix("instances", instances_skeleton(spec), "Add an instances skeleton"),
            ))
        snippets = (("reader", spec.reader, "read"), ("complete", spec.complete, "complete"),
                    ("instances", spec.instances, "instances"))
        for field, source, entry in snippets:
            calls = blocking_calls(source, entry)
            if calls:
                named = ", ".join(f"{call}() (line {line})" for call, line in calls[:3])
                findings.append(_finding(
                    "blocking-in-async",
                    f"{kind} {spec.name!r}: async def {entry}() calls {named}, which blocks its shared worker's "
                    "event loop: every read beside it waits, and past the deadline the worker is killed",
                    resource=spec.name, field=field,
                ))
        if not spec.description.strip():
            findings.append(_finding(
                "missing-description", f"{kind} {spec.name!r} has no description: say what it holds and when to "
                "read it", resource=spec.name, field="description",
            ))
        address = spec.key
        found = re.match(r"(?i)(https?)://", address)
        if found:
            key = "uri_template" if spec.is_template else "uri"
            rest = address[found.end():]
            findings.append(_finding(
                "fetchable-scheme",
                f"{kind} {spec.name!r} is addressed {address}: its content comes from this server's reader, which "
                f"no browser can fetch from the web; use a scheme of your own, e.g. {scheme}://{rest}",
                resource=spec.name, field=key,
            ))
    return findings


def _own_scheme(server_name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", server_name.lower()).strip("-")
    return slug if slug and slug[0].isalpha() else "app"


def instances_skeleton(spec: ResourceSpec) -> str:
    """A `def instances():` listing the template's samples (placeholders when it has none)."""
    from resources_qt.templates import compile_template  # the SDK's template parser: only when a fix is built

    try:
        compiled = compile_template(spec.uri_template)
    except ValidationError:
        return "def instances():\n    return []\n"
    variables = compiled.variable_names or ("id",)
    items: list[dict[str, str]] = []
    for sample in spec.samples:
        params = compiled.match(sample)
        if params is not None:
            items.append({name: _text(params.get(name, "")) for name in variables})
    if not items:
        placeholder = ", ".join(f"{name!r}: {f'{name}-1'!r}" for name in variables)
        return ("def instances():\n    # one dict of the template's variables per instance, or a URI\n"
                f"    return [{{{placeholder}}}]\n")
    body = "".join(f"        {item!r},\n" for item in items)
    return ("def instances():\n    # the concrete URIs resources/list shows: one dict per instance\n"
            f"    return [\n{body}    ]\n")


def _text(value: object) -> str:
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


# -- checks of one read -------------------------------------------------------------


def check_read(target: ReadTarget, observed: ObservedRead | None, *, tests: Sequence[TestSpec],
               client_error: str = "") -> list[Finding]:
    """The findings of one read of `target`: it failed, or its contents against the declaration."""
    if observed is None or observed.failed:
        code = observed.error_code if observed is not None else None
        if code is not None and any(test.uri == target.uri and test.expect.error == code for test in tests):
            return []
        what = client_error or f"error {code}: {observed.error_message if observed is not None else ''}"
        return [_at(target, "sample-fails", f"{target.label} fails to read: {what}")]
    findings: list[Finding] = []
    served = sum(len(content.data()) for content in observed.contents)
    if target.size is not None and target.size != served:
        fix = Fix("size", served, f"Set size to {served}") if target.own else None
        findings.append(_at(
            target, "size-mismatch", f"{target.label} declares size {target.size:,} bytes but serves {served:,}",
            field="size", fix=fix,
        ))
    for index, content in enumerate(observed.contents):
        findings.extend(_check_type(target, content, index=index, many=len(observed.contents) > 1))
    echoed = next((content.uri for content in observed.contents if content.uri != target.uri), None)
    if echoed is not None:
        findings.append(_at(
            target, "uri-not-echoed", f"{target.label}: the read of {target.uri} answers content for {echoed}; "
            "give each content the URI that was read (the reader's `uri`)",
        ))
    return findings


def _check_type(target: ReadTarget, content: ObservedContent, *, index: int, many: bool) -> list[Finding]:
    what = f"{target.label}: content {index + 1}" if many else target.label
    field = "mime_type"
    declared, served = target.mime_type, content.mime_type or ""
    # The content's type follows the declaration unless the reader chose one: only then is changing it a fix.
    follows = not served or essence(served) == essence(declared)
    findings: list[Finding] = []
    if declared and served and essence(declared) != essence(served):
        fix = Fix("mime_type", served, f"Set the MIME type to {served}") if _fixable(target, many=many) else None
        findings.append(_at(
            target, "mime-mismatch", f"{what} declares {declared} but the content is {served}", level="warning",
            field=field, fix=fix,
        ))
    kind = served or declared
    if not kind:
        return findings
    if content.is_blob:
        data = content.blob or b""
        found = sniff(data)
        if is_text_type(kind):
            said = f"; the bytes are {found.name}" if found is not None else ""
            fix = _type_fix(target, found, follows=follows, many=many)
            findings.append(_at(
                target, "mime-mismatch", f"{what} is {kind}, a text type, but serves a {len(data):,}-byte blob{said}",
                field=field, fix=fix,
            ))
            return findings
        expected = expected_format(kind)
        if expected is not None and (found is None or found != expected):
            if found is None:
                said = f"the bytes are not {expected.name} (they begin {data[:8].hex(' ') or 'with nothing'})"
            else:
                said = f"the bytes are {found.name}"
            findings.append(_at(
                target, "mime-mismatch", f"{what} is {kind} but {said}",
                field=field, fix=_type_fix(target, found, follows=follows, many=many),
            ))
        return findings
    text = content.text or ""
    if is_binary_type(kind):
        findings.append(_at(
            target, "mime-mismatch", f"{what} is {kind} ({format_named(kind)}), a binary type, but serves "
            f"{len(text):,} characters of text", field=field,
        ))
    elif is_json_type(kind):
        try:
            json.loads(text)
        except ValueError as exc:
            reason = (f"{exc.msg} at line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError)
                      else str(exc))
            findings.append(_at(target, "mime-mismatch", f"{what} is {kind} but the text is not JSON: {reason}",
                                field=field))
    return findings


def _fixable(target: ReadTarget, *, many: bool) -> bool:
    """Whether setting the resource's `mime_type` is certain to change what this read declares.

    A listed instance may declare its own type (the `instances` answer), and one content of several
    says nothing of the others: neither is fixed by the resource's key.
    """
    return (target.own or (target.sample and not target.instance)) and not many


def _type_fix(target: ReadTarget, found: Format | None, *, follows: bool, many: bool) -> Fix | None:
    if found is None or not follows or not _fixable(target, many=many):
        return None
    return Fix("mime_type", found.mime_type, f"Set the MIME type to {found.mime_type}")
