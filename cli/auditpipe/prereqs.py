"""Checks for the tools the local stack builds and runs with, with what to do when one is missing."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

from auditpipe.errors import UserError


def require_java17() -> str:
    java = shutil.which("java")
    if not java:
        raise UserError("no 'java' on PATH: the local stack needs a JDK 17 or newer "
                        "(Debian: apt-get install openjdk-17-jdk-headless)")
    out = subprocess.run([java, "-version"], capture_output=True, text=True).stderr
    m = re.search(r'version "(\d+)', out)
    if not m or int(m.group(1)) < 17:
        raise UserError(f"'java' is {out.splitlines()[0] if out else 'unknown'}; Kafka 4.2 and Flink 2.2 need "
                        "JDK 17 or newer (Debian: apt-get install openjdk-17-jdk-headless)")
    return java


def require_tool(name: str, install_hint: str) -> str:
    path = shutil.which(name)
    if not path:
        raise UserError(f"no '{name}' on PATH: {install_hint}")
    return path


def require_maven() -> str:
    return require_tool("mvn", "the local stack builds the Flink job and fetches Kafka and Flink from Maven "
                               "Central with Maven (Debian: apt-get install maven)")


def require_go() -> str:
    return require_tool("go", "the local store, FerretDB, is built from the Go module proxy with Go 1.22 or newer "
                              "(https://go.dev/doc/install, or Debian: apt-get install golang)")


def is_root() -> bool:
    return os.geteuid() == 0
