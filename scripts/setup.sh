#!/usr/bin/env bash
# Creates .venv with txconform and its test dependencies, after checking the tools it cannot install itself.
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python3}
if ! command -v "$python" >/dev/null 2>&1; then
    echo "setup: $python not found: install Python 3.10+ (Debian: apt-get install python3 python3-venv)" >&2
    exit 1
fi
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
    echo "setup: $("$python" --version 2>&1) is too old: txconform needs Python 3.10+" >&2
    exit 1
fi

# TLC (and Apalache) run on the JVM; say how to get one instead of failing later inside a model run.
java_bin=java
[ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ] && java_bin="$JAVA_HOME/bin/java"
if ! command -v "$java_bin" >/dev/null 2>&1; then
    echo "setup: Java not found: TLC needs Java 17+; install it (Debian: apt-get install openjdk-17-jre-headless) or set JAVA_HOME" >&2
    exit 1
fi
java_version=$("$java_bin" -version 2>&1 | sed -n 's/.*version "\([0-9]*\)[."].*/\1/p' | head -n 1)
if [ -z "$java_version" ] || [ "$java_version" -lt 17 ]; then
    echo "setup: $java_bin is Java ${java_version:-of unknown version}: TLC needs Java 17+ (Debian: apt-get install openjdk-17-jre-headless, or set JAVA_HOME)" >&2
    exit 1
fi

# The docs site's browser test (tests/test_docs_site.py) loads the site in Debian's chromium: as root
# (a container, CI) install it when missing; otherwise say how, once, and the test skips.
if ! command -v chromium >/dev/null 2>&1 && [ -z "${TXCONFORM_CHROMIUM:-}" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "setup: installing chromium (Debian's package) for the docs site's browser test"
        apt-get install -y -qq chromium >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1; } \
            || echo "setup: apt-get could not install chromium: the docs site's browser test will skip" >&2
    else
        echo "setup: no chromium: the docs site's browser test will skip (Debian: sudo apt-get install chromium, or set TXCONFORM_CHROMIUM)" >&2
    fi
fi

if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test,spark,probe,cassandra,ydb,docs]' 2> >(grep -v "^WARNING: Location" >&2)
touch .venv/.txconform-installed
echo "setup: .venv ready (Java $java_version, $(.venv/bin/python --version))"
