# Recipe for one Kubernetes release (copied into kubernetes-<minor>/recipe.sh by
# new-kubernetes-recipe.sh). Builds the seven commands with the flags
# upstream's hack/lib/golang.sh uses, and stamps the version the way
# hack/lib/version.sh does: kubeadm's preflight parses the kubelet's
# `--version`, and every component reports it.
# shellcheck shell=bash

targets() {
  printf '%s\n' kube-apiserver kube-controller-manager kube-scheduler kubelet kubeadm kubectl kube-proxy
}

build_target() {
  local out=$1 cmd=$2 version minor date ld p
  version=$(module_version k8s.io/kubernetes)
  minor=${version#v1.}
  minor=${minor%%.*}
  # The release's tag time, from the proxy's .info: deterministic, and true.
  # gitCommit stays unset: the module zip does not say which commit it is.
  date=$(go list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' k8s.io/kubernetes)
  ld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=$version -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    ld="$ld -X $p.gitTreeState=clean -X $p.buildDate=$date"
  done
  mkdir -p "$out/bin"
  # kubelet is static from 1.36 (kubernetes/kubernetes#135870); before, upstream builds it with cgo.
  if [ "$cmd" = kubelet ] && [ "$minor" -lt 36 ]; then
    CGO_ENABLED=1 go_build "$out/bin/$cmd" "k8s.io/kubernetes/cmd/$cmd" -tags selinux,notest -ldflags "$ld"
  else
    go_build "$out/bin/$cmd" "k8s.io/kubernetes/cmd/$cmd" -tags selinux,notest -ldflags "$ld"
  fi
  printf '%s\n' "$version" > "$out/VERSION"
}
