#!/bin/bash
# Copies the finished 2.5 Gbit/s replications under STAGING (drive.py's) into the committed cache,
# trimmed as pacing.commit_runs trims them. Run from anywhere, with this checkout's cclab installed.
set -euo pipefail
if [ $# -ne 1 ]; then echo "usage: bash commit.sh STAGING" >&2; exit 2; fi
S=$(realpath "$1")
C=$(realpath "$(dirname "$0")/../../docs/studies/pacing/cache")
for d in "$S"/fig5/*/2.5Gbps; do v=$(basename "$(dirname "$d")"); python -m cclab.studies.pacing commit-runs "$d" "$C/fig5/$v/2.5Gbps" >/dev/null; done
for d in "$S"/fig4/*@*; do n=$(basename "$d"); python -m cclab.studies.pacing commit-runs "$d" "$C/fig4/${n%@*}" >/dev/null; done
for d in "$S"/fig4-overhead/*; do python -m cclab.studies.pacing commit-runs "$d" "$C/fig4-overhead/$(basename "$d")" >/dev/null; done
echo "$(find "$C" -name summary.json | wc -l) runs in $C"
