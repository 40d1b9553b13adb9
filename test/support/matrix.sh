#!/usr/bin/env bash
# The Python versions xlac supports (3.11, 3.12, 3.13), one venv each: build the
# wheel once, install it (with the test extras) into .venv-matrix/<version>, then
# run a representative subset of the tests from that venv, against the
# installed package.
#
#   bash test/support/matrix.sh                  # every version found
#   PYTHONS="3.12 3.13" bash test/support/matrix.sh
#   MATRIX_TESTS="test/python" bash test/support/matrix.sh   # the whole suite
#
# Interpreters come from pyenv (/root/.pyenv/versions/3.1x*/bin/python) or PATH
# (python3.1x). CI runs one version (.ci/run); this runs the others here.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
PYTHONS=${PYTHONS:-"3.11 3.12 3.13"}
MATRIX_TESTS=${MATRIX_TESTS:-"test/python/api test/python/tools/test_habits.py test/python/tools/test_cli.py test/python/cpu/test_lapack.py test/python/cpu/test_linalg_ops.py test/python/aot test/python/tools/test_lit.py"}
WHEELS=$REPO/.venv-matrix/wheels
mkdir -p "$WHEELS"

interpreter() {
    local found
    found=$(ls -d /root/.pyenv/versions/"$1".*/bin/python 2>/dev/null | tail -1 || true)
    [ -n "$found" ] || found=$(command -v "python$1" || true)
    echo "$found"
}

status=0
summary=()
for version in $PYTHONS; do
    python=$(interpreter "$version")
    if [ -z "$python" ]; then
        summary+=("$version: no interpreter found (skipped)")
        continue
    fi
    venv=$REPO/.venv-matrix/$version
    echo "== Python $version ($python): $venv"
    [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
    rm -f "$WHEELS"/xlac-*.whl
    "$venv/bin/pip" wheel -q --no-deps -w "$WHEELS" "$REPO" > "$venv.build.log" 2>&1
    wheel=$(ls "$WHEELS"/xlac-*.whl)
    "$venv/bin/pip" install -q --force-reinstall --no-deps "$wheel"
    "$venv/bin/pip" install -q "$wheel[test,bench,lapack,cuda]" 2>&1 | grep -v "^WARNING: Location" || true
    start=$SECONDS
    # from outside the repository, so the installed package is what runs
    if (cd /tmp && XLAC_MATRIX=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider \
            --rootdir="$REPO" -c "$REPO/pyproject.toml" \
            $(for t in $MATRIX_TESTS; do echo "$REPO/$t"; done)); then
        summary+=("$version: passed ($((SECONDS - start)) s) with $("$venv/bin/python" -c 'import sys; print(sys.version.split()[0])')")
    else
        summary+=("$version: FAILED")
        status=1
    fi
done
echo
printf '%s\n' "${summary[@]}"
exit $status
