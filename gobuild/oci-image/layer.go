package main

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// buildLayers writes one gzip'd tar per folder into tmp and opens each as a layer.
func buildLayers(dirs []string, meta *pathMeta, created time.Time, tmp string) ([]v1.Layer, error) {
	layers := make([]v1.Layer, 0, len(dirs))
	for i, dir := range dirs {
		file := filepath.Join(tmp, fmt.Sprintf("layer-%d.tar.gz", i))
		if err := writeLayer(dir, file, meta, created); err != nil {
			return nil, fmt.Errorf("layer %s: %w", dir, err)
		}
		l, err := tarball.LayerFromFile(file, tarball.WithMediaType(types.OCILayer))
		if err != nil {
			return nil, err
		}
		layers = append(layers, l)
	}
	return layers, nil
}

func writeLayer(dir, file string, meta *pathMeta, created time.Time) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	gz := gzip.NewWriter(f) // no name, zero time: deterministic
	tw := tar.NewWriter(gz)
	// Hard links inside the folder (dpkg-deb keeps them) stay links: first path wins.
	seen := map[[2]uint64]string{}
	// WalkDir visits entries in lexical order, so the archive's order is fixed.
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		return addEntry(tw, p, filepath.ToSlash(rel), meta, created, seen)
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return f.Close()
}

func addEntry(tw *tar.Writer, p, rel string, meta *pathMeta, created time.Time, seen map[[2]uint64]string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	link := ""
	if fi.Mode()&fs.ModeSymlink != 0 {
		if link, err = os.Readlink(p); err != nil {
			return err
		}
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0 {
		return fmt.Errorf("%s: only files, folders and symlinks go into a layer", p)
	}
	h, err := tar.FileInfoHeader(fi, link)
	if err != nil {
		return err
	}
	h.Name = rel
	if fi.IsDir() {
		h.Name += "/"
	}
	h.Uid, h.Gid, h.Uname, h.Gname = 0, 0, "", ""
	h.ModTime, h.AccessTime, h.ChangeTime = created, time.Time{}, time.Time{}
	h.Format = tar.FormatPAX
	abs := "/" + rel
	if o, ok := meta.owner[abs]; ok {
		h.Uid, h.Gid = o[0], o[1]
		meta.used[abs] = true
	}
	if c, ok := meta.caps[abs]; ok {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("--file-cap %s: not a regular file", abs)
		}
		h.PAXRecords = map[string]string{"SCHILY.xattr.security.capability": string(vfsCap(c))}
		meta.used[abs] = true
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && fi.Mode().IsRegular() && st.Nlink > 1 {
		id := [2]uint64{uint64(st.Dev), st.Ino}
		if first, dup := seen[id]; dup {
			h.Typeflag, h.Linkname, h.Size = tar.TypeLink, first, 0
			return tw.WriteHeader(h)
		}
		seen[id] = rel
	}
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return nil
	}
	src, err := os.Open(p)
	if err != nil {
		return err
	}
	defer src.Close()
	_, err = io.Copy(tw, src)
	return err
}
