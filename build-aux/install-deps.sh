#!/usr/bin/env bash
# install-deps.sh — installs the Debian packages Cowscope needs, if missing.
#
# Usage: build-aux/install-deps.sh [--dry-run] [--bench] [EXTRA-PACKAGE...]
#
#   --dry-run  only report which packages are missing (exit 1 if any)
#   --bench    also the benchmark-only group (BENCH_PACKAGES below)
#   EXTRA-PACKAGE  further packages to require on top of the list below
#
# Targets Debian 12 (bookworm).  As root, missing packages are installed
# with apt-get (apt-get update runs only when something must be
# installed).  As another user, the missing packages and the command that
# installs them are printed and the script exits 1.  Nothing is done when
# everything is already installed.
set -euo pipefail

# The packages Cowscope needs, grouped by what needs them.  Later issues
# add their groups here (GTK 4 + libadwaita for the app, graphviz,
# xvfb for GUI tests, libdw for stack traces, ...).
PACKAGES=(
  # Toolchain: compiler, libc headers and make-level tools.  gcc 12 on
  # Debian ships the ASan, UBSan and TSan runtimes (libasan8, libubsan1,
  # libtsan2 via libgcc-12-dev), so the sanitizer builds need nothing more.
  build-essential
  # Build system.
  meson
  ninja-build
  pkgconf
  # Test suites and benchmarks (GLib test framework).  Not used by the
  # engine itself.
  libglib2.0-dev
  # Session database (recorder, app, CLI) and the sqlite3 shell to query it.
  libsqlite3-dev
  sqlite3
  # Compressing the session's packed event chunks.
  libzstd-dev
  # Symbolizing call stacks in the recorder (elfutils' libdw)
  libdw-dev
  libelf-dev
  # `cowscope-cli report --json` and its tests (json-glib)
  libjson-glib-dev
  # The GTK application (GTK 4.8, libadwaita 1.2) and its graph layout
  # (Graphviz's libgvc; `graphviz` for the dot tool).
  libgtk-4-dev
  libadwaita-1-dev
  libgraphviz-dev
  graphviz
  # GResource xml-stripblanks (xmllint), and the tools meson's install
  # hooks run (gtk4-update-icon-cache, update-mime-database).
  libxml2-utils
  libgtk-4-bin
  shared-mime-info
  # Translations and the validation of the desktop file and metainfo.
  gettext
  desktop-file-utils
  appstream
  # GUI tests under a virtual X display, and screenshots of it.
  xvfb
  xauth
  imagemagick
  # cowscope-cli's bash completion: its install folder (bash-completion's
  # pkg-config file) and its test (bash-completion's helpers).
  bash-completion
)

# Benchmarks only, with --bench: LTTng-UST, the peer that the overhead
# and recorder benchmarks run beside Cowscope in the same rounds
# (tests/bench/lttng/): the tracepoint library and headers (the LTTng
# burst target is built only when meson finds them), the session and
# consumer daemons, and babeltrace2 to read a trace by hand.  Nothing
# else needs them: without them those benchmarks print "skipped: <reason>"
# for LTTng.  Opt-in because on a machine with systemd, installing
# lttng-tools starts a system-wide root session daemon (the benchmarks
# start a private one of their own and never use it).
BENCH_PACKAGES=(
  liblttng-ust-dev
  lttng-tools
  babeltrace2
)

dry_run=0
extra=()
for arg in "$@"; do
  case "$arg" in
    --dry-run) dry_run=1 ;;
    --bench) extra+=("${BENCH_PACKAGES[@]}") ;;
    -h | --help)
      sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    -*)
      echo "install-deps.sh: unknown option: $arg" >&2
      exit 2
      ;;
    *) extra+=("$arg") ;;
  esac
done
wanted=("${PACKAGES[@]}" "${extra[@]}")

# True when @1 is installed ("ii" for at least one architecture).
is_installed () {
  dpkg-query -W -f='${db:Status-Abbrev}\n' "$1" 2>/dev/null | grep -q '^ii'
}

missing_packages () {
  local pkg
  for pkg in "${wanted[@]}"; do
    is_installed "$pkg" || printf '%s\n' "$pkg"
  done
}

# Warns when gcc cannot find a sanitizer runtime (the ASan/TSan stages
# of run-tests.sh would fail); never fatal: the demo does not need them.
check_sanitizer_runtimes () {
  local cc=${CC:-gcc} lib path
  command -v "$cc" > /dev/null 2>&1 || return 0
  for lib in libasan.so libubsan.so libtsan.so; do
    path=$("$cc" -print-file-name="$lib" 2> /dev/null || true)
    if [[ "$path" != /* ]]; then
      echo "install-deps.sh: warning: $cc has no $lib; sanitizer builds will fail" \
           "(on Debian it comes with libgcc-<version>-dev)" >&2
    fi
  done
}

if ! command -v dpkg-query > /dev/null 2>&1; then
  echo "install-deps.sh: dpkg-query not found: this is not a Debian system." >&2
  echo "Install the equivalents of: ${wanted[*]}" >&2
  for tool in meson ninja pkg-config cc; do
    if ! command -v "$tool" > /dev/null 2>&1; then
      echo "install-deps.sh: '$tool' is missing." >&2
      exit 1
    fi
  done
  echo "install-deps.sh: continuing with the tools already present." >&2
  exit 0
fi

mapfile -t missing < <(missing_packages)

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps.sh: all ${#wanted[@]} required packages are installed."
  check_sanitizer_runtimes
  exit 0
fi

echo "install-deps.sh: missing packages: ${missing[*]}"

if [[ $dry_run -eq 1 ]]; then
  echo "install-deps.sh: dry run, nothing installed."
  exit 1
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps.sh: not running as root, cannot install them." >&2
  echo "Install them with:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# Wait for another apt/dpkg (e.g. unattended-upgrades on a fresh machine)
# instead of failing at once.
apt_opts=(-o DPkg::Lock::Timeout=600 -q)

echo "install-deps.sh: apt-get update"
if ! apt-get "${apt_opts[@]}" update < /dev/null; then
  echo "install-deps.sh: apt-get update failed (is a Debian mirror reachable?)" >&2
  exit 1
fi
echo "install-deps.sh: apt-get install ${missing[*]}"
if ! apt-get "${apt_opts[@]}" install -y --no-install-recommends "${missing[@]}" \
       < /dev/null; then
  echo "install-deps.sh: apt-get install failed for: ${missing[*]}" >&2
  exit 1
fi

mapfile -t still_missing < <(missing_packages)
if [[ ${#still_missing[@]} -ne 0 ]]; then
  echo "install-deps.sh: still missing after apt-get: ${still_missing[*]}" >&2
  exit 1
fi
echo "install-deps.sh: installed ${#missing[@]} package(s)."
check_sanitizer_runtimes
