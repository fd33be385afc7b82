#!/usr/bin/env bash
# Formats the code base: clang-format-14 with the checked-in .clang-format
# (Google style, 80 columns) over the C++ sources, black at 80 columns over
# the Python sources. bench/data/, .venv/ and build folders are left alone.
# Usage: bash scripts/format.sh          rewrites the files in place
#        bash scripts/format.sh --check  changes nothing; exits 1 and names
#                                        the files that are not formatted
# Both tools are Debian 12 packages that scripts/install_deps.sh installs.
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
case "${1:-}" in
  "") ;;
  --check) check=1 ;;
  *) echo "format.sh: unknown argument \"$1\" (valid: --check)" >&2; exit 2 ;;
esac
for tool in clang-format-14 black; do
  if ! command -v "$tool" > /dev/null; then
    echo "format.sh: $tool is missing: run scripts/install_deps.sh" >&2
    exit 1
  fi
done

# The project's sources under the given folders, NUL-separated.
sources() {
  local pattern=$1
  shift
  find "$@" -type d \( -path bench/data -o -name .venv -o -name 'build*' \
                       -o -name __pycache__ \) -prune \
       -o -type f -regextype posix-extended -regex "$pattern" -print0 | sort -z
}

status=0
cxx_dirs=(src planners tools python bench include tests examples fuzz)
if ((check)); then
  sources '.*\.(cc|h)' "${cxx_dirs[@]}" |
    xargs -0 clang-format-14 --style=file --dry-run -Werror || status=1
else
  sources '.*\.(cc|h)' "${cxx_dirs[@]}" |
    xargs -0 clang-format-14 --style=file -i
fi
py_dirs=(python scripts tests bench fuzz)
black_args=(--quiet --line-length 80)
((check)) && black_args+=(--check --diff)
sources '.*\.py' "${py_dirs[@]}" | xargs -0 black "${black_args[@]}" || status=1
if ((status)); then
  echo "format.sh: some files are not formatted: run scripts/format.sh" >&2
fi
exit $status
