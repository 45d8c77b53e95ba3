package sendlog

import (
	"encoding/binary"
)

// The key table: each batch's distinct keys, found by a hash of their
// first eight bytes.

// keyDict gives each distinct key of a batch its index. It is an
// open-addressing table over the batch's own key store whose slots hold
// keys of up to eight bytes whole, so that the common short key costs one
// hash and one word comparison: a Go map cost more than parsing the rest of
// the line. A longer key that repeats the last one found skips the table.
type keyDict struct {
	slots []dictSlot
	used  []int32 // the slots filled for this batch, to clear them
	// The last key longer than a word that was found, and its index.
	last    []byte
	lastID  int32
	hasLast bool
}

type dictSlot struct {
	word uint64 // the key's first eight bytes, little-endian
	hash uint64
	n    int32 // the key's length
	id   int32 // the key's index + 1; 0 is an empty slot
}

func (d *keyDict) reset() {
	for _, s := range d.used {
		d.slots[s] = dictSlot{}
	}
	d.used = d.used[:0]
	d.hasLast = false
	if d.slots == nil {
		d.slots = make([]dictSlot, 256)
	}
}

// keyWord packs a key's first eight bytes into a word and hashes the key.
func keyWord(key []byte) (w, h uint64) {
	if len(key) >= 8 {
		w = binary.LittleEndian.Uint64(key)
	} else {
		for i, c := range key {
			w |= uint64(c) << (8 * i)
		}
	}
	h = (w ^ uint64(len(key))<<56) * 0x9E3779B97F4A7C15
	for rest := key[min(len(key), 8):]; len(rest) > 0; rest = rest[min(len(rest), 8):] {
		var x uint64
		if len(rest) >= 8 {
			x = binary.LittleEndian.Uint64(rest)
		} else {
			for i, c := range rest {
				x |= uint64(c) << (8 * i)
			}
		}
		h = (h ^ h>>29 ^ x) * 0xBF58476D1CE4E5B9
	}
	return w, h ^ h>>32
}

// index returns key's index among b's distinct keys, adding it on first
// sight.
func (d *keyDict) index(b *Batch, key []byte) int32 {
	if len(key) <= 8 {
		w, _ := keyWord(key)
		return d.indexShort(b, key, w)
	}
	if d.hasLast && string(key) == string(d.last) {
		return d.lastID
	}
	w, h := keyWord(key)
	mask := uint64(len(d.slots) - 1)
	i := h & mask
	for ; d.slots[i].id != 0; i = (i + 1) & mask {
		s := &d.slots[i]
		if s.word == w && int(s.n) == len(key) && string(b.DistinctKey(int(s.id-1))) == string(key) {
			// The stored copy, not key: a JSON key's bytes may be the
			// parser's, overwritten by the next line.
			d.setLast(b.DistinctKey(int(s.id-1)), s.id-1)
			return s.id - 1
		}
	}
	id := d.add(b, key, w, h, i)
	d.setLast(b.DistinctKey(int(id)), id)
	return id
}

// indexShort is index for a key of at most eight bytes, w being the key
// as keyWord packs it. Such a key is compared as its word and length
// alone, without touching its bytes; the common case, found in its home
// slot, is small enough to inline.
func (d *keyDict) indexShort(b *Batch, key []byte, w uint64) int32 {
	h := shortHash(w, len(key))
	if s := d.home(h); s.word == w && int(s.n) == len(key) && s.id != 0 {
		return s.id - 1
	}
	return d.probeShort(b, key, w, h)
}

// shortHash is keyWord's hash of a key of at most eight bytes.
func shortHash(w uint64, n int) uint64 {
	h := (w ^ uint64(n)<<56) * 0x9E3779B97F4A7C15
	return h ^ h>>32
}

// home returns the slot where a key of hash h is looked for first.
func (d *keyDict) home(h uint64) *dictSlot { return &d.slots[h&uint64(len(d.slots)-1)] }

// probeShort is indexShort past the key's home slot.
func (d *keyDict) probeShort(b *Batch, key []byte, w, h uint64) int32 {
	n := int32(len(key))
	mask := uint64(len(d.slots) - 1)
	i := h & mask
	for ; d.slots[i].id != 0; i = (i + 1) & mask {
		if s := &d.slots[i]; s.word == w && s.n == n {
			return s.id - 1
		}
	}
	return d.add(b, key, w, h, i)
}

// setLast notes a key longer than a word as the last found.
func (d *keyDict) setLast(stored []byte, id int32) {
	d.last, d.lastID, d.hasLast = stored, id, true
}

// add stores key in b as a new distinct key, in the empty slot i.
func (d *keyDict) add(b *Batch, key []byte, w, h uint64, i uint64) int32 {
	id := int32(len(b.keyOff))
	b.keyOff = append(b.keyOff, int32(len(b.keys)))
	b.keyLen = append(b.keyLen, int32(len(key)))
	b.keys = append(b.keys, key...)
	d.slots[i] = dictSlot{word: w, hash: h, n: int32(len(key)), id: id + 1}
	d.used = append(d.used, int32(i))
	if 2*len(d.used) > len(d.slots) {
		d.rehash()
	}
	return id
}

// rehash doubles the table, keeping it at most half full.
func (d *keyDict) rehash() {
	old := d.slots
	d.slots = make([]dictSlot, 2*len(old))
	mask := uint64(len(d.slots) - 1)
	d.used = d.used[:0]
	for _, s := range old {
		if s.id == 0 {
			continue
		}
		i := s.hash & mask
		for d.slots[i].id != 0 {
			i = (i + 1) & mask
		}
		d.slots[i] = s
		d.used = append(d.used, int32(i))
	}
}
