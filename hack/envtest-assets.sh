#!/usr/bin/env bash
# Provides a real kube-apiserver and etcd for controller-runtime envtest.
#
# First the ecosystem's usual way: controller-runtime's setup-envtest (run
# from the Go module proxy) fetching prebuilt binaries of the pinned version.
# Where that fails (only the Go module proxy and Debian's packages are
# reachable, or no prebuilt release of the version exists yet), both binaries
# are built from pinned Go modules (hack/tools/kube-apiserver and
# hack/tools/etcd, each a nested module with its own go.mod/go.sum). Either
# way they are cached in the git-ignored bin/envtest/, and the log says which
# path was taken.
#
# Usage:
#   export KUBEBUILDER_ASSETS="$(hack/envtest-assets.sh)"
#
# stdout carries only the absolute assets directory; every log line goes to
# stderr. When both binaries are present and report the pinned versions the
# script only checks them and exits (well under a second).
#
# Environment:
#   ENVTEST_ASSETS_FORCE=1   rebuild even if the cached binaries look right
#   ENVTEST_SOURCE=1         skip setup-envtest and build from source
#   ENVTEST_ETCD=debian      skip the etcd source build and use Debian's
#                            etcd-server package (what a failed build falls
#                            back to anyway). A Debian etcd, once in place,
#                            is kept until ENVTEST_ASSETS_FORCE=1 or
#                            bin/envtest/ is removed.
#   GO=/path/to/go           Go toolchain to build with (default: go on PATH)
set -euo pipefail

# Pinned versions. Changing them means updating the nested go.mod files too:
# the versions below are what the built binaries must report.
readonly KUBE_VERSION=v1.37.1   # k8s.io/kubernetes in hack/tools/kube-apiserver/go.mod
readonly ETCD_VERSION=3.7.2     # go.etcd.io/etcd/server/v3 in hack/tools/etcd/go.mod
readonly SETUP_ENVTEST_VERSION=v0.25.1  # sigs.k8s.io/controller-runtime/tools/setup-envtest
readonly ETCD_DEBIAN_PKG=etcd-server            # fallback only: Debian 12 ships etcd 3.4
readonly ETCD_DEBIAN_PKG_VERSION=3.4.23-4+b4     # tried first; else the current one

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
readonly ROOT
readonly ASSETS="${ROOT}/bin/envtest"
readonly TOOLS="${ROOT}/hack/tools"
# Present only when etcd did not come from the source build (setup-envtest or
# Debian); holds the version it must report.
readonly ETCD_FALLBACK_MARKER="${ASSETS}/.etcd-from-debian"

log() { echo "envtest-assets: $*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}

# Prints the version a binary reports, or nothing if it is missing or broken.
# timeout guards against a binary that hangs instead of printing its version.
kube_apiserver_version() {
  [[ -x "${ASSETS}/kube-apiserver" ]] || return 0
  # "Kubernetes v1.37.1"
  timeout 20 "${ASSETS}/kube-apiserver" --version 2>/dev/null | awk '{print $2; exit}' || true
}
etcd_version() {
  [[ -x "${ASSETS}/etcd" ]] || return 0
  # "etcd Version: 3.7.2"
  timeout 20 "${ASSETS}/etcd" --version 2>/dev/null | awk '/^etcd Version:/ {print $3; exit}' || true
}
expected_etcd_version() {
  if [[ -f "${ETCD_FALLBACK_MARKER}" ]]; then
    cat "${ETCD_FALLBACK_MARKER}"
  else
    echo "${ETCD_VERSION}"
  fi
}
kube_apiserver_ok() { [[ "$(kube_apiserver_version)" == "${KUBE_VERSION}" ]]; }
etcd_ok() {
  local want
  # An explicit ENVTEST_ETCD=debian replaces a source-built etcd.
  if [[ "${ENVTEST_ETCD:-}" == debian && ! -f "${ETCD_FALLBACK_MARKER}" ]]; then
    return 1
  fi
  want="$(expected_etcd_version)"
  [[ -n "${want}" && "$(etcd_version)" == "${want}" ]]
}

# Fast path: nothing to do, no locking, no go toolchain needed.
if [[ "${ENVTEST_ASSETS_FORCE:-}" != 1 ]] && kube_apiserver_ok && etcd_ok; then
  echo "${ASSETS}"
  exit 0
fi

mkdir -p "${ASSETS}"

# Serialise concurrent callers (e.g. parallel test runs on a cold machine):
# the second one waits and then finds the binaries ready.
if command -v flock >/dev/null 2>&1; then
  exec 9>"${ASSETS}/.lock"
  if ! flock -n 9; then
    log "another envtest-assets.sh is building; waiting for it..."
    flock 9
  fi
fi

# The Go toolchain: $GO if set (the Makefile passes its own), else go on PATH,
# else the standard install location of a fresh machine.
GO_CMD=""
require_go() {
  [[ -z "${GO_CMD}" ]] || return 0
  if [[ -n "${GO:-}" ]]; then
    GO_CMD="$(command -v "${GO}" 2>/dev/null)" || die "GO=${GO} is not an executable Go toolchain. Unset GO or point it at go 1.26 or newer."
  elif ! GO_CMD="$(command -v go 2>/dev/null)"; then
    [[ -x /usr/local/go/bin/go ]] ||
      die "'go' is not on PATH (nor at /usr/local/go/bin/go). kube-apiserver and etcd for envtest are built from source with the Go toolchain (go 1.26 or newer, see hack/tools/*/go.mod). Install Go, put it on PATH (or set GO=/path/to/go) and re-run ${BASH_SOURCE[0]}."
    GO_CMD=/usr/local/go/bin/go
  fi
}

# Builds one Go package of a nested tools module into ASSETS/<name>.
# The output is written to a temp file and renamed, so a half-written binary
# is never picked up. GOWORK=off keeps any go.work at the repo root from
# pulling the nested modules into the root build (or vice versa); -mod=readonly
# makes a stale go.sum an error instead of a silent edit.
go_build() {
  local module_dir=$1 pkg=$2 name=$3 ldflags=$4
  local tmp="${ASSETS}/.${name}.tmp.$$"
  if ! (cd "${module_dir}" &&
    GOWORK=off CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" \
      "${GO_CMD}" build -trimpath -ldflags "${ldflags}" -o "${tmp}" "${pkg}" >&2); then
    rm -f "${tmp}"
    return 1
  fi
  mv -f "${tmp}" "${ASSETS}/${name}"
}

build_kube_apiserver() {
  require_go
  log "building kube-apiserver ${KUBE_VERSION} from source with $("${GO_CMD}" version | awk '{print $3}') (cold: ~5 min on 2 cores)..."
  # Without these -X flags the binary reports v0.0.0-master; kubernetes'
  # hack/lib/version.sh sets the same variables in both packages.
  local ldflags="-s -w" pkg minor
  minor="${KUBE_VERSION#v1.}"
  minor="${minor%%.*}"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X ${pkg}.gitVersion=${KUBE_VERSION}"
    ldflags+=" -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${minor}"
    ldflags+=" -X ${pkg}.gitTreeState=clean"
  done
  go_build "${TOOLS}/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver kube-apiserver "${ldflags}" ||
    die "building kube-apiserver failed (see the go output above). It needs the Go module proxy (GOPROXY=$("${GO_CMD}" env GOPROXY)) to serve k8s.io/kubernetes ${KUBE_VERSION} and the k8s.io/* staging modules pinned in hack/tools/kube-apiserver/go.mod, and ~3 GiB free for the module and build caches."
  kube_apiserver_ok ||
    die "built kube-apiserver reports '$(kube_apiserver_version)', expected ${KUBE_VERSION}; check the -X ldflags in $0 against k8s.io/component-base/version."
}

build_etcd() {
  require_go
  log "building etcd ${ETCD_VERSION} from source (cold: ~1 min)..."
  go_build "${TOOLS}/etcd" . etcd "-s -w" && rm -f "${ETCD_FALLBACK_MARKER}" && etcd_ok
}

# Fallback when etcd cannot be built: Debian's etcd-server (etcd 3.4). It is
# older than what kube-apiserver ${KUBE_VERSION} is tested against but serves
# envtest's CRUD/watch use. Only the .deb is downloaded and its binary copied:
# `apt-get install` would also start etcd as a system service (its postinst
# runs invoke-rc.d) and needs root. An already installed /usr/bin/etcd is
# reused as is.
etcd_from_debian() {
  local src=/usr/bin/etcd work=""
  if [[ ! -x "${src}" ]]; then
    if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-deb >/dev/null 2>&1; then
      die "etcd could not be built and apt-get/dpkg-deb are not available to fetch Debian's ${ETCD_DEBIAN_PKG}. Fix the Go build of hack/tools/etcd, or put an etcd binary at ${ASSETS}/etcd and write its version into ${ETCD_FALLBACK_MARKER}."
    fi
    work="$(mktemp -d)"
    log "downloading Debian package ${ETCD_DEBIAN_PKG}=${ETCD_DEBIAN_PKG_VERSION}..."
    if ! debian_download "${work}" "${ETCD_DEBIAN_PKG}=${ETCD_DEBIAN_PKG_VERSION}"; then
      log "${ETCD_DEBIAN_PKG}=${ETCD_DEBIAN_PKG_VERSION} is not available; taking the current ${ETCD_DEBIAN_PKG}"
      debian_download "${work}" "${ETCD_DEBIAN_PKG}" || {
        rm -rf "${work}"
        die "'apt-get download ${ETCD_DEBIAN_PKG}' failed (as root, run 'apt-get update' first). Install it by hand ('apt-get install -y ${ETCD_DEBIAN_PKG}', binary /usr/bin/etcd) and re-run."
      }
    fi
    dpkg-deb -x "${work}"/"${ETCD_DEBIAN_PKG}"_*.deb "${work}/root" ||
      die "could not unpack the downloaded ${ETCD_DEBIAN_PKG} .deb in ${work}."
    src="${work}/root/usr/bin/etcd"
  fi
  cp -f "${src}" "${ASSETS}/.etcd.tmp.$$"
  mv -f "${ASSETS}/.etcd.tmp.$$" "${ASSETS}/etcd"
  [[ -z "${work}" ]] || rm -rf "${work}"
  local v
  v="$(etcd_version)"
  [[ -n "${v}" ]] || die "Debian's etcd (${src}) does not report a version."
  echo "${v}" >"${ETCD_FALLBACK_MARKER}"
  log "using Debian etcd ${v} instead of ${ETCD_VERSION}"
}

# apt-get download <dir> <pkg[=version]>: into dir; refreshes the package
# lists once (root only) when they are missing or stale.
debian_download() {
  local dir=$1 pkg=$2
  (cd "${dir}" && apt-get download -qq "${pkg}" >&2 2>/dev/null) && return 0
  [[ "$(id -u)" == 0 ]] || return 1
  apt-get update -qq >&2 || return 1
  (cd "${dir}" && apt-get download -qq "${pkg}" >&2)
}

# try_setup_envtest fetches prebuilt kube-apiserver and etcd with
# setup-envtest into ASSETS; it fails (returning 1) quickly where the release
# index or the binaries cannot be downloaded.
try_setup_envtest() {
  [[ "${ENVTEST_SOURCE:-}" != 1 && -z "${ENVTEST_ETCD:-}" ]] || return 1
  require_go
  log "fetching prebuilt kube-apiserver and etcd ${KUBE_VERSION} with setup-envtest ${SETUP_ENVTEST_VERSION}..."
  local dir errlog="${ASSETS}/.setup-envtest.log" name
  if ! dir="$(GOWORK=off GOFLAGS= timeout 600 "${GO_CMD}" run "sigs.k8s.io/controller-runtime/tools/setup-envtest@${SETUP_ENVTEST_VERSION}" \
    use "${KUBE_VERSION#v}" --bin-dir "${ASSETS}/setup-envtest" -p path 2>"${errlog}")" || [[ ! -x "${dir}/kube-apiserver" || ! -x "${dir}/etcd" ]]; then
    log "setup-envtest could not provide them ($(grep -v "^exit status" "${errlog}" 2>/dev/null | tail -n 1)); building from source instead"
    return 1
  fi
  for name in kube-apiserver etcd; do
    cp -f "${dir}/${name}" "${ASSETS}/.${name}.tmp.$$"
    mv -f "${ASSETS}/.${name}.tmp.$$" "${ASSETS}/${name}"
  done
  rm -f "${ETCD_FALLBACK_MARKER}"
  etcd_version >"${ETCD_FALLBACK_MARKER}"
  if ! kube_apiserver_ok || ! etcd_ok; then
    log "setup-envtest's kube-apiserver reports '$(kube_apiserver_version)', expected ${KUBE_VERSION}; building from source instead"
    rm -f "${ASSETS}/kube-apiserver" "${ASSETS}/etcd" "${ETCD_FALLBACK_MARKER}"
    return 1
  fi
  log "using prebuilt binaries from setup-envtest"
}

# Re-check under the lock: a concurrent run may have finished meanwhile.
if [[ "${ENVTEST_ASSETS_FORCE:-}" == 1 ]] || ! kube_apiserver_ok || ! etcd_ok; then
  if try_setup_envtest; then
    log "kube-apiserver $(kube_apiserver_version), etcd $(etcd_version) ready in ${ASSETS}"
    echo "${ASSETS}"
    exit 0
  fi
fi
if [[ "${ENVTEST_ASSETS_FORCE:-}" == 1 ]] || ! etcd_ok; then
  if [[ "${ENVTEST_ETCD:-}" == debian ]]; then
    etcd_from_debian
  elif ! build_etcd; then
    log "etcd source build failed; falling back to Debian's ${ETCD_DEBIAN_PKG}"
    etcd_from_debian
  fi
fi
if [[ "${ENVTEST_ASSETS_FORCE:-}" == 1 ]] || ! kube_apiserver_ok; then
  build_kube_apiserver
fi

log "kube-apiserver $(kube_apiserver_version), etcd $(etcd_version) ready in ${ASSETS}"
echo "${ASSETS}"
