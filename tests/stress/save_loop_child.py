"""Child process for the kill -9 test: saves a project of changing size to argv[1] until killed."""

from __future__ import annotations

import sys

from resources_qt.project import Project, ResourceSpec, ServerSettings, save_project


def main(path: str) -> None:
    n = 0
    while True:
        count = 1 + (n % 7) * 40  # alternate small and large files so kills land mid-write too
        specs = [
            ResourceSpec(name=f"r{i}", uri=f"docs://r{i}", reader=f"def read(uri, params):\n    return {n}\n" * 3)
            for i in range(count)
        ]
        save_project(Project(server=ServerSettings(name=f"save {n}"), resources=specs), path)
        if n == 0:
            print("ready", flush=True)
        n += 1


if __name__ == "__main__":
    main(sys.argv[1])
