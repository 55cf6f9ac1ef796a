"""JUnit XML for CI systems: one `testcase` per test and era, a `failure` element carrying the message."""

from __future__ import annotations

import os
import re
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from resources_qt.testing.runner import TestResult

__all__ = ["junit_xml", "write_junit"]

# What XML 1.0 cannot carry, even as a character reference: most C0 controls, lone surrogates,
# U+FFFE and U+FFFF. A reader's output (quoted in a failure) may hold any of them.
_XML_UNSAFE = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _escape(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"  # as Python's repr() writes it


def _clean(text: str) -> str:
    """`text` with what XML 1.0 cannot hold written as a visible escape (U+FFFF becomes the six characters \\uffff)."""
    return _XML_UNSAFE.sub(_escape, text)


def junit_xml(results: Sequence[TestResult], *, suite: str, with_era: bool) -> str:
    """The results as a JUnit XML document (`testsuites` > `testsuite` > `testcase`)."""
    failed = sum(1 for result in results if not result.passed)
    total_s = sum(result.elapsed_ms for result in results) / 1000.0
    root = ET.Element("testsuites", name=_clean(suite), tests=str(len(results)), failures=str(failed),
                      errors="0", time=f"{total_s:.3f}")
    suite_element = ET.SubElement(root, "testsuite", name=_clean(suite), tests=str(len(results)),
                                  failures=str(failed), errors="0", skipped="0", time=f"{total_s:.3f}")
    for result in results:
        classname = f"{suite}.{result.era}" if with_era else suite
        case = ET.SubElement(suite_element, "testcase", classname=_clean(classname),
                             name=_clean(result.label(with_era=with_era)), time=f"{result.elapsed_ms / 1000.0:.3f}")
        ET.SubElement(case, "properties")
        properties = case[0]
        for key, value in (("uri", result.uri), ("era", result.era), ("resource", result.resource or "")):
            ET.SubElement(properties, "property", name=key, value=_clean(value))
        if not result.passed:
            first_line = result.failures[0].splitlines()[0] if result.failures[0] else "failed"
            failure = ET.SubElement(case, "failure", message=_clean(first_line), type="AssertionError")
            failure.text = _clean("\n\n".join(result.failures))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(path: Path, results: Sequence[TestResult], *, suite: str, with_era: bool) -> None:
    """Write the JUnit document to `path` atomically (a CI step never reads half a report)."""
    text = junit_xml(results, suite=suite, with_era=with_era)
    directory = path.parent if str(path.parent) else Path(".")
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
