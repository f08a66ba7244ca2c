#!/usr/bin/env bash
# Makes sure chromium is there for the dashboard's browser tests
# (server/dashboard/browser_test.go): Debian's package, installed with
# apt-get when it is missing and we are root. Otherwise it says, in one
# line, that the browser tests will skip; it never fails the build.
set -u
for b in chromium chromium-browser google-chrome google-chrome-stable; do
	if command -v "$b" >/dev/null 2>&1; then
		exit 0
	fi
done
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "chromium is missing: installing Debian's package for the dashboard's browser tests"
	if DEBIAN_FRONTEND=noninteractive apt-get install -y chromium >/dev/null 2>&1 ||
		{ apt-get update >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium >/dev/null 2>&1; }; then
		exit 0
	fi
fi
echo "chromium is not installed and cannot be installed here (root and apt-get needed): the dashboard's browser tests will skip"
exit 0
