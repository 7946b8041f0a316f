package grammar

import "sync"

var dfaCacheMu sync.Mutex

// The rule cache: a rule's DFA (and its per-state token masks) depends only
// on the structure of its byte NFA, where checked edges and calls are opaque
// labels (op and rule numbers). So rules are interned across compilations by
// a 128-bit hash of that structure: recompiling a schema, or compiling one
// that shares an object or array shape with an earlier one (with the same
// numbering of its checks and calls), reuses the DFA and the masks already
// computed for it. The cache is bounded; when full it starts over.
const ruleCacheMax = 8192

var (
	ruleCacheMu sync.Mutex
	ruleCache   = map[sig128]*rule{}
	// ruleCacheOff disables the cache (benchmarks of cold compilation).
	ruleCacheOff bool
)

func ruleCacheGet(k sig128) *rule {
	if ruleCacheOff {
		return nil
	}
	ruleCacheMu.Lock()
	defer ruleCacheMu.Unlock()
	return ruleCache[k]
}

func ruleCachePut(k sig128, r *rule) {
	if ruleCacheOff {
		return
	}
	ruleCacheMu.Lock()
	defer ruleCacheMu.Unlock()
	if len(ruleCache) >= ruleCacheMax {
		clear(ruleCache)
	}
	ruleCache[k] = r
}

// hasher is a 128-bit structural hash.
type hasher struct{ h1, h2 uint64 }

func newHasher() hasher { return hasher{14695981039346656037, 0x84222325cbf29ce4} }

func (h *hasher) mix(x uint64) {
	h.h1 = (h.h1 ^ x) * 0x100000001b3
	h.h2 = (h.h2 ^ (x + 0x9E37)) * 0x9E3779B97F4A7C15
	h.h2 ^= h.h2 >> 29
}

func (h *hasher) sum() sig128 { return sig128{h.h1, h.h2} }

// hash is a structural hash of n: everything determinization and
// minimization read (string provenance by the content hash of its DFA).
func (n *bnfa) hash() sig128 {
	h := newHasher()
	h.mix(uint64(len(n.st)))
	for i := range n.st {
		st := &n.st[i]
		var f uint64
		if st.final {
			f |= 1
		}
		if st.rb {
			f |= 2
		}
		h.mix(f | uint64(uint32(st.lim))<<8)
		if st.sd != nil {
			c := st.sd.contentHash()
			h.mix(c.a)
			h.mix(c.b)
			h.mix(uint64(uint32(st.si)))
		} else {
			h.mix(0xABCDEF)
		}
		h.mix(uint64(len(st.eps)))
		for _, e := range st.eps {
			h.mix(uint64(uint32(e)))
		}
		h.mix(uint64(len(st.edges)))
		for _, e := range st.edges {
			h.mix(uint64(e.lo) | uint64(e.hi)<<8 | uint64(uint32(e.to))<<16)
			h.mix(uint64(uint32(e.op)))
		}
		h.mix(uint64(len(st.calls)))
		for _, c := range st.calls {
			h.mix(uint64(uint32(c.rule))<<32 | uint64(uint32(c.to)))
		}
	}
	return h.sum()
}

// contentHash is a hash of d's states and edges (computed once).
func (d *rdfa) contentHash() sig128 {
	d.chOnce.Do(func() {
		h := newHasher()
		h.mix(uint64(len(d.st)))
		for _, s := range d.st {
			if s.final {
				h.mix(1)
			} else {
				h.mix(2)
			}
			h.mix(uint64(len(s.edges)))
			for _, e := range s.edges {
				h.mix(uint64(uint32(e.lo)) | uint64(uint32(e.hi))<<32)
				h.mix(uint64(uint32(e.to)))
			}
		}
		d.ch = h.sum()
	})
	return d.ch
}
