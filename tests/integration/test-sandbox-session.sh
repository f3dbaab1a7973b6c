#!/usr/bin/env bash
# test-sandbox.sh with every `ward run` going through a live session and
# `ward exec` (ward-via-session.sh): each protection it checks for a cold
# run must hold for a command of a live session too.
here=$(cd "$(dirname "$0")" && pwd)
export WARD_REAL="$WARD" WARD="$here/ward-via-session.sh"
exec bash "$here/test-sandbox.sh"
