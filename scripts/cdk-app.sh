#!/bin/sh
# cdk.json's "app": run app.py with the project's interpreter, whatever is first on PATH.
# Order: $KB_PYTHON, the repository's .venv (what `make assets` creates), the active virtualenv.
repo=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
if [ -n "${KB_PYTHON:-}" ] && [ ! -x "$KB_PYTHON" ]; then
    echo "kb: KB_PYTHON=$KB_PYTHON is not an executable interpreter" >&2
    exit 1
fi
for python in "${KB_PYTHON:-}" "$repo/.venv/bin/python" "${VIRTUAL_ENV:+$VIRTUAL_ENV/bin/python}"; do
    if [ -n "$python" ] && [ -x "$python" ]; then
        exec "$python" "$repo/app.py" "$@"
    fi
done
echo "kb: no project interpreter: run \`make assets\` (it creates .venv) or set KB_PYTHON" >&2
exit 1
