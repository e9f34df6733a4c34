#!/usr/bin/env bash
# The repository (about 220 MB tracked, mostly sweeps/, models/, reports/, export/) is larger than the 64 MiB the
# device tool sends. Before a device call that needs none of those folders:
#   bash scripts/device_tree.sh slim     # unstage them (files stay on disk) and ignore them locally; keeps KEEP paths
# and right after the call (also after a failed one):
#   bash scripts/device_tree.sh restore  # index back to HEAD, local ignore removed
# KEEP (space-separated paths under those folders the call needs, default sweeps/runs/s31/dilated.csv) stays sent.
set -euo pipefail
cd "$(dirname "$0")/.."
big=(sweeps models reports export)
case ${1:?usage: device_tree.sh slim|restore} in
  slim)
    git diff --cached --quiet || { echo "device_tree: the index has staged changes; commit them first" >&2; exit 1; }
    git rm -r -q --cached "${big[@]}"
    # shellcheck disable=SC2086
    git add -f ${KEEP:-sweeps/runs/s31/dilated.csv}
    printf '/%s/\n' "${big[@]}" > .git/info/exclude
    git ls-files -co --exclude-standard -z | xargs -0 stat -c %s | awk '{s += $1} END {printf "sent: %.1f MB\n", s / 1e6}'
    ;;
  restore)
    git reset -q
    rm -f .git/info/exclude
    ;;
  *) echo "usage: device_tree.sh slim|restore" >&2; exit 2 ;;
esac
