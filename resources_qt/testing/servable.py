"""Which resources a test run holds back (they cannot be served) and why, and which samples are implicit tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from resources_qt.collection import Resources
from resources_qt.errors import ValidationError
from resources_qt.project import Project, ResourceSpec
from resources_qt.project.model import placeholder_reader
from resources_qt.snippets.diagnostics import check_snippet
from resources_qt.templates import CompiledTemplate, compile_template

__all__ = [
    "declared_resources",
    "held_back_message",
    "implicit_samples",
    "is_placeholder_sample",
    "placeholder_sample",
    "resolved_name",
    "unservable",
]

_SNIPPETS = (("reader", "reader", "read"), ("completion snippet", "complete", "complete"),
             ("instances snippet", "instances", "instances"))  # fmt: skip


def placeholder_sample(template: CompiledTemplate) -> str:
    """The sample a new template starts with: each variable's value is its name plus "-1" (`{id}` gives `id-1`).

    It is a stand-in the studio writes so the preview has something to read,
    not a URI the author chose: `implicit_samples` leaves it out of the tests.
    """
    return template.expand({name: f"{name}-1" for name in template.variable_names})


def is_placeholder_sample(spec: ResourceSpec, uri: str) -> bool:
    """`uri` is the template's own `placeholder_sample` (for the template as it is now)."""
    if not spec.is_template:
        return False
    try:
        return uri == placeholder_sample(compile_template(spec.uri_template))
    except ValidationError:
        return False


def implicit_samples(spec: ResourceSpec) -> list[str]:
    """The sample URIs that run as implicit tests: `sample_uris()` without the placeholder."""
    return [uri for uri in spec.sample_uris() if not is_placeholder_sample(spec, uri)]


def unservable(project: Project) -> dict[str, list[str]]:
    """{resource name: why it cannot be served}, for the resources a run holds back, in project order.

    The same checks as the studio's: the declaration (`ResourceSpec.validate`),
    an address two resources declare, a snippet that does not compile (with
    its line), and a missing reader. Nothing is executed.
    """
    by_key: dict[str, list[str]] = {}
    for spec in project.resources:
        by_key.setdefault(spec.key, []).append(spec.name)
    out: dict[str, list[str]] = {}
    for spec in project.resources:
        reasons = _reasons(spec)
        others = [name for name in by_key.get(spec.key, []) if name != spec.name]
        if spec.key and others:
            reasons.append(f"{spec.key!r} is also declared by {', '.join(repr(name) for name in others)}")
        if reasons:
            out[spec.name] = reasons
    return out


def held_back_message(name: str, reasons: Sequence[str]) -> str:
    """A held-back resource's tests fail with this: `not run: 'x' is not served: its reader does not compile: …`."""
    return f"not run: {name!r} is not served: " + "; ".join(reasons)


def declared_resources(project: Project, *, leave_out: Mapping[str, object] | None = None) -> Resources:
    """The project's declarations as a collection that resolves URIs as the server does (no reader runs).

    A declaration that could not be served is skipped, as when served.
    """
    resources = Resources()
    for spec in project.resources:
        if leave_out is not None and spec.name in leave_out:
            continue
        try:
            resources.add_resource(spec.to_resource(placeholder_reader))
        except ValidationError:
            continue
    return resources


def resolved_name(resources: Resources, uri: str) -> str | None:
    """The name of the resource or template `uri` resolves to in `resources`, or None."""
    try:
        match = resources.resolve(uri)
    except ValidationError:
        return None
    return match.resource.name if match is not None else None


def _reasons(spec: ResourceSpec) -> list[str]:
    reasons: list[str] = []
    try:
        spec.validate()
    except ValidationError as exc:
        reasons.append(exc.message)
    for label, attribute, function in _SNIPPETS:
        source = getattr(spec, attribute)
        if not source.strip():
            continue
        filename = f"<{attribute}>"
        diagnostic = check_snippet(source, filename=filename)
        if diagnostic is not None:
            reasons.append(f"its {label} does not compile: {diagnostic}")
        elif check_snippet(source, filename=filename, function=function) is not None:
            reasons.append(f"its {label} defines no {function}() function")
    if not spec.reader.strip():
        reasons.append("it has no reader snippet")
    return reasons
