"""The SDK's self-contained modules load without the `mcp` package, and keep one identity once it is imported."""

from __future__ import annotations

import os
import py_compile
import subprocess
import sys
import textwrap
from pathlib import Path

from resources_qt import sdk_light


def _run(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_resource_core_and_project_files_load_without_the_mcp_package() -> None:
    out = _run("""
        import sys
        import resources_qt, resources_qt.project
        from resources_qt import Resources, Resource, ValidationError
        r = Resources()
        r.register_template_resource("t", "files://{name}", "", "text/plain", lambda uri, params: "x")
        assert r.resolve("files://a").params == {"name": "a"}
        print("mcp" in sys.modules, "mcp.server" in sys.modules, "mcp.client" in sys.modules)
    """)
    assert out == "False False False"


def test_the_full_sdk_imported_later_shares_the_preloaded_classes() -> None:
    out = _run("""
        import resources_qt
        from resources_qt.errors import ResourceNotFoundError, ValidationError
        from resources_qt.templates import compile_template
        import mcp
        from mcp.shared.exceptions import MCPError
        from mcp.shared import uri_template
        from mcp.server.lowlevel import Server
        assert mcp.MCPError is MCPError
        import mcp.shared.exceptions
        assert mcp.shared.exceptions.MCPError is MCPError  # bound on the package, as an ordinary import does
        assert mcp.shared.path_security.is_absolute_path("/etc")
        assert mcp.UriTemplate is uri_template.UriTemplate
        # The resource errors are not SDK errors; the protocol boundary maps them to the same code and data.
        assert not issubclass(ValidationError, mcp.MCPError)
        error = ResourceNotFoundError("x://1").to_mcp()
        assert type(error) is MCPError
        print(error.code, error.message, error.error.data)
    """)
    assert out == "-32002 Resource not found: x://1 {'uri': 'x://1'}"


def test_preload_does_nothing_once_the_sdk_is_imported() -> None:
    out = _run("""
        import sys
        import mcp
        before = sys.modules["mcp.shared.exceptions"]
        from resources_qt import sdk_light
        sdk_light.preload()
        print(sys.modules["mcp.shared.exceptions"] is before)
    """)
    assert out == "True"


def test_the_preloaded_modules_need_no_other_part_of_the_sdk() -> None:
    # If an SDK upgrade makes one of them import more of the package, the preload still works
    # but saves nothing: this says so.
    out = _run("""
        import sys
        from resources_qt import sdk_light
        sdk_light.preload()
        loaded = [name for name in sdk_light.LIGHT_MODULES if name in sys.modules]
        others = sorted(m for m in sys.modules if m.split(".")[0] == "mcp" and m not in sdk_light.LIGHT_MODULES)
        print(loaded == list(sdk_light.LIGHT_MODULES), others)
    """)
    assert out == "True []"


_FAKE_SDK = {
    "mcp/__init__.py": (
        "import mcp.shared.uri_template\nfrom mcp.shared.uri_template import UriTemplate\n"
        "from mcp.shared.exceptions import MCPError\nFULL = True\n"
    ),
    "mcp/shared/__init__.py": "",
    "mcp/shared/exceptions.py": "class MCPError(Exception):\n    pass\n",
    "mcp/shared/uri_template.py": "class UriTemplate:\n    pass\n",
    "mcp/shared/path_security.py": "def is_absolute_path(p):\n    return p.startswith('/')\n",
}

_LOAD_SDK_LIGHT = """
    import importlib.util, sys
    spec = importlib.util.spec_from_file_location("sdk_light_under_test", {path!r})
    sdk_light = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sdk_light)
    sdk_light.preload()
"""


def _fake_sdk(root: Path, overrides: dict[str, str] | None = None) -> Path:
    for relative, text in {**_FAKE_SDK, **(overrides or {})}.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


def _run_with(path: Path, code: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(path)}
    script = textwrap.dedent(_LOAD_SDK_LIGHT.format(path=str(Path(sdk_light.__file__)))) + textwrap.dedent(code)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                            check=False, env=env)  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_a_bytecode_only_sdk_is_preloaded_too(tmp_path: Path) -> None:
    root = _fake_sdk(tmp_path)
    for name in ("exceptions", "uri_template", "path_security"):
        source = root / "mcp" / "shared" / f"{name}.py"
        py_compile.compile(str(source), cfile=str(source.with_suffix(".pyc")), doraise=True)
        source.unlink()
    out = _run_with(root, """
        print("mcp" in sys.modules, "mcp.shared.uri_template" in sys.modules)
        preloaded = sys.modules["mcp.shared.uri_template"].UriTemplate
        import mcp
        print(mcp.FULL, mcp.UriTemplate is preloaded, mcp.shared.uri_template.UriTemplate is preloaded)
    """)
    assert out.splitlines() == ["False True", "True True True"]


def test_an_sdk_whose_modules_need_the_package_is_left_to_the_ordinary_import(tmp_path: Path) -> None:
    root = _fake_sdk(tmp_path, {
        "mcp/shared/_codes.py": "CODE = -32002\n",
        "mcp/shared/uri_template.py": "from mcp.shared._codes import CODE\nclass UriTemplate:\n    code = CODE\n",
    })  # fmt: skip
    out = _run_with(root, """
        print(sorted(m for m in sys.modules if m == "mcp" or m.startswith("mcp.")))
        import mcp
        from mcp.shared.uri_template import UriTemplate
        print(mcp.FULL, mcp.UriTemplate is UriTemplate, UriTemplate.code)
    """)
    assert out.splitlines() == ["[]", "True True -32002"]
