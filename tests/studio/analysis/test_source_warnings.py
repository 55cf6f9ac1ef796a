"""The pyflakes adapter of the analysis process: what a snippet is warned about, where, and what it knows."""

from __future__ import annotations

import subprocess
import sys

from studio.analysis.helper_process import encode_request
from studio.analysis.source_warnings import (
    MAX_WARNINGS,
    SourceWarning,
    WarningsRequest,
    compute_warnings,
    defined_names,
    find_warnings,
    helper_names,
)


def _reader(source: str, prelude: str = "") -> list[SourceWarning]:
    return compute_warnings(WarningsRequest(request_id=1, owner=1, source=source, prelude=prelude))


def test_an_unused_import_is_underlined_at_its_name() -> None:
    assert find_warnings("import os\n") == [SourceWarning(1, 8, 10, "'os' imported but unused")]
    # The name as bound: the alias, the last part of a dotted import.
    assert find_warnings("import os.path as p\n") == [SourceWarning(1, 19, 20, "'os.path as p' imported but unused")]
    assert find_warnings("from a.b import c\n") == [SourceWarning(1, 17, 18, "'a.b.c' imported but unused")]


def test_an_import_over_several_lines_is_marked_from_its_statement_to_the_line_end() -> None:
    assert find_warnings("from a import (\n    b,\n)\n") == [SourceWarning(1, 1, 0, "'a.b' imported but unused")]


def test_an_undefined_name_is_underlined_where_it_is_used() -> None:
    found = find_warnings("def read(uri, params):\n    return uri + undefined_thing\n")
    assert found == [SourceWarning(2, 18, 33, "undefined name 'undefined_thing'")]


def test_warnings_are_in_the_order_of_the_text() -> None:
    found = find_warnings("import os\ndef read(uri, params):\n    x = 1\n    return y\n")
    assert [(w.line, w.message) for w in found] == [
        (1, "'os' imported but unused"),
        (3, "local variable 'x' is assigned to but never used"),
        (4, "undefined name 'y'"),
    ]


def test_a_source_that_does_not_compile_has_no_warnings_the_compile_error_says_it_alone() -> None:
    assert find_warnings("import os\ndef read(uri, params):\n    return (undefined_thing\n") == []
    # Parses, but does not compile: pyflakes would say "'return' outside function" a second time.
    assert find_warnings("import os\nreturn undefined_thing\n") == []
    assert find_warnings("import os\nx = '\0'\n") == []  # a NUL byte: compile refuses it, nothing crashes
    assert find_warnings("") == [] and find_warnings("   \n") == []


def test_the_snippet_helpers_are_known_to_every_reader() -> None:
    assert {"text", "blob", "NotFound", "current_uri", "ResourceContent", "PROJECT_DIR"} <= helper_names()
    source = (
        "def read(uri, params):\n"
        "    if not params:\n"
        "        raise NotFound(f'no {uri} in {PROJECT_DIR}')\n"
        "    if params.get('raw'):\n"
        "        return blob(b'x', 'application/octet-stream')\n"
        "    return text(current_uri())\n"
    )
    assert _reader(source) == []
    assert [w.message for w in find_warnings(source)] == [
        f"undefined name '{name}'" for name in ("NotFound", "PROJECT_DIR", "blob", "text", "current_uri")
    ]


def test_a_reader_knows_every_name_its_prelude_defines() -> None:
    prelude = (
        "import json\n"
        "from pathlib import Path as P\n"
        "try:\n"
        "    import yaml\n"
        "except ImportError:\n"
        "    yaml = None\n"
        "LIMIT, _SECRET = 3, 'x'\n"
        "def helper():\n"
        "    return 1\n"
        "class Store:\n"
        "    pass\n"
    )
    assert defined_names(prelude) == {"json", "P", "yaml", "LIMIT", "_SECRET", "helper", "Store"}
    reader = "def read(uri, params):\n    return text(json.dumps([LIMIT, _SECRET, helper(), Store, P, yaml]))\n"
    assert _reader(reader, prelude) == []
    assert [w.message for w in _reader(reader + "\nOTHER = missing\n", prelude)] == ["undefined name 'missing'"]


def test_a_prelude_whose_names_cannot_be_known_flags_no_undefined_name_in_readers() -> None:
    reader = "import os\ndef read(uri, params):\n    return LIMIT\n"
    for prelude in ("LIMIT = (\n", "from config import *\n"):
        assert defined_names(prelude) is None
        assert [w.message for w in _reader(reader, prelude)] == ["'os' imported but unused"]


def test_the_prelude_is_a_module_its_imports_are_the_readers() -> None:
    prelude = "import json\nfrom pathlib import Path\nTOP = LIMT\n"
    found = compute_warnings(WarningsRequest(request_id=1, owner=1, source=prelude, module=True))
    assert found == [SourceWarning(3, 7, 11, "undefined name 'LIMT'")]
    # The prelude knows the helpers too (they are in its namespace), but never its own readers' names.
    assert compute_warnings(WarningsRequest(request_id=1, owner=1, source="X = text\n", module=True)) == []


def test_the_warnings_of_one_snippet_are_bounded() -> None:
    source = "".join(f"import m{n}\n" for n in range(MAX_WARNINGS + 50))
    assert len(find_warnings(source)) == MAX_WARNINGS


def test_the_helper_process_answers_a_warnings_request_and_imports_no_qt() -> None:
    request = WarningsRequest(request_id=7, owner=3, source="import os\n", prelude="", module=False)
    probe = (
        "import sys, runpy\n"
        "sys.argv = ['helper']\n"
        "try:\n"
        "    runpy.run_module('studio.analysis.helper_process', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('qt' if any(m.startswith('PySide6') for m in sys.modules) else 'no qt', file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], input=encode_request(request) + "\n", capture_output=True,
                          text=True, timeout=120, check=True)  # fmt: skip
    lines = done.stdout.splitlines()
    assert lines[0] == '{"ready": true}'
    assert lines[1] == '{"id": 7, "warnings": [[1, 8, 10, "\'os\' imported but unused"]]}'
    assert done.stderr.strip().endswith("no qt")
