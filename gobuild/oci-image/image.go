package main

import (
	"fmt"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// assemble stacks the layers on an empty OCI image and writes its config.
func assemble(o options, layers []v1.Layer, created time.Time) (v1.Image, error) {
	osName, arch, ok := strings.Cut(o.platform, "/")
	if !ok {
		return nil, fmt.Errorf("--platform %q: want OS/ARCH", o.platform)
	}
	if len(o.history) != 0 && len(o.history) != len(layers) {
		return nil, fmt.Errorf("%d --history for %d --layer: give one per layer or none", len(o.history), len(layers))
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	adds := make([]mutate.Addendum, len(layers))
	for i, l := range layers {
		h := v1.History{Created: v1.Time{Time: created}, CreatedBy: "kubemix gobuild: layer " + fmt.Sprint(i)}
		if len(o.history) > 0 {
			h.CreatedBy = o.history[i]
		}
		adds[i] = mutate.Addendum{Layer: l, History: h, MediaType: types.OCILayer}
	}
	img, err := mutate.Append(img, adds...)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = osName, arch
	cf.Created = v1.Time{Time: created}
	cf.Config.Entrypoint = o.entrypoint
	cf.Config.Cmd = o.cmd
	cf.Config.User = o.user
	cf.Config.WorkingDir = o.workdir
	cf.Config.Env = append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, o.env...)
	cf.Config.Labels = map[string]string{}
	for _, kv := range o.labels {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("--label %q: want K=V", kv)
		}
		cf.Config.Labels[k] = v
	}
	return mutate.ConfigFile(img, cf)
}
