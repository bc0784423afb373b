#!/usr/bin/env bash
# A headless browser for the test that opens report.html (tests/unit/metrics/test_report_html.py):
# Debian's chromium, installed once with apt where we are root; elsewhere the test skips and
# says why. Idempotent: an installed chromium is kept as it is.
set -euo pipefail
for browser in chromium chromium-browser google-chrome; do
  if command -v "$browser" >/dev/null; then exit 0; fi
done
if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null; then
  echo "aerialdojo: no chromium and no root apt-get; the HTML report's browser test will skip" >&2
  exit 0
fi
echo "aerialdojo: installing chromium (apt) for the HTML report's browser test"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
