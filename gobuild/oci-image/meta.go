package main

import (
	"encoding/binary"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
)

// pathMeta is what the folders cannot say themselves: owners other than root
// and file capabilities, by absolute path inside the image.
type pathMeta struct {
	owner map[string][2]int
	caps  map[string]uint64
	used  map[string]bool
}

// Capability numbers from linux/capability.h; only those images here need.
var capNumbers = map[string]uint{
	"chown": 0, "dac_override": 1, "fowner": 3, "kill": 5, "setgid": 6, "setuid": 7,
	"net_bind_service": 10, "net_broadcast": 11, "net_admin": 12, "net_raw": 13,
	"sys_chroot": 18, "sys_admin": 21,
}

func parseMeta(o options) (*pathMeta, error) {
	m := &pathMeta{owner: map[string][2]int{}, caps: map[string]uint64{}, used: map[string]bool{}}
	for _, c := range o.chown {
		p, ids, ok := strings.Cut(c, "=")
		u, g, ok2 := strings.Cut(ids, ":")
		uid, err1 := strconv.Atoi(u)
		gid, err2 := strconv.Atoi(g)
		if !ok || !ok2 || err1 != nil || err2 != nil || !path.IsAbs(p) {
			return nil, fmt.Errorf("--chown %q: want /PATH=UID:GID", c)
		}
		m.owner[path.Clean(p)] = [2]int{uid, gid}
	}
	for _, c := range o.caps {
		p, names, ok := strings.Cut(c, "=")
		if !ok || !path.IsAbs(p) || names == "" {
			return nil, fmt.Errorf("--file-cap %q: want /PATH=CAP[,CAP]", c)
		}
		var bits uint64
		for _, n := range strings.Split(names, ",") {
			num, known := capNumbers[strings.TrimPrefix(strings.ToLower(n), "cap_")]
			if !known {
				return nil, fmt.Errorf("--file-cap %q: unknown capability %q", c, n)
			}
			bits |= 1 << num
		}
		m.caps[path.Clean(p)] = bits
	}
	return m, nil
}

// unused lists the paths given that no layer held: a typo must not pass silently.
func (m *pathMeta) unused() []string {
	var out []string
	for p := range m.owner {
		if !m.used[p] {
			out = append(out, p)
		}
	}
	for p := range m.caps {
		if !m.used[p] {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// vfsCap is the security.capability xattr value setcap writes for CAPS=+ep:
// struct vfs_cap_data, revision 2, effective flag set, permitted = caps.
func vfsCap(caps uint64) []byte {
	b := make([]byte, 20)
	binary.LittleEndian.PutUint32(b[0:], 0x02000000|0x1) // VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE
	binary.LittleEndian.PutUint32(b[4:], uint32(caps))   // permitted[0]
	binary.LittleEndian.PutUint32(b[8:], 0)              // inheritable[0]
	binary.LittleEndian.PutUint32(b[12:], uint32(caps>>32))
	binary.LittleEndian.PutUint32(b[16:], 0)
	return b
}
