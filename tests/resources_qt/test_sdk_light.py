"""The SDK's self-contained modules load without the `mcp` package, and keep one identity once it is imported."""

from __future__ import annotations

import subprocess
import sys
import textwrap


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
        assert issubclass(ValidationError, mcp.MCPError)
        assert mcp.UriTemplate is uri_template.UriTemplate
        try:
            raise ResourceNotFoundError("x://1")
        except mcp.MCPError as exc:
            print(exc.code, exc.error.data)
    """)
    assert out == "-32002 {'uri': 'x://1'}"


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
