# Sourced by the test scripts: installs the Debian packages listed in the file
# given as $1 (apt-get, only the missing ones), npm dependencies when
# node_modules is absent or older than the lockfile, then a clean build (so a
# test deleted from the sources cannot linger in dist/).
prepare() {
  local list=$1 pkg
  local -a wanted missing=() sudo_cmd=()
  mapfile -t wanted < <(grep -vE '^\s*(#|$)' "$list" || true)
  for pkg in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing Debian packages: ${missing[*]}" >&2
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  fi
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    npm ci --no-audit --no-fund >&2
  fi
  rm -rf dist
  npm run --silent build
}
