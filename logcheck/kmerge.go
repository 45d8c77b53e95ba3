package logcheck

// merger merges runs of sends, each in (time, ref) order, into one, reusing
// its buffers from round to round.
type merger struct {
	bufs []held // by node of the merge tree; bufs[1] is the result
}

// merge returns the runs merged in (time, ref) order, equal times in the
// order of segs (the inputs' order). The result is valid until the next
// call.
//
// Runs are merged two at a time up a balanced tree, each pass a plain
// two-way merge: with the inputs' sends interleaved, that costs fewer and
// better predicted comparisons a send than a heap's sift-down.
func (m *merger) merge(segs []held) held {
	if len(segs) == 1 {
		return segs[0]
	}
	return m.node(segs, 1)
}

func (m *merger) node(segs []held, id int) held {
	if len(segs) == 1 {
		return segs[0]
	}
	mid := len(segs) / 2
	a, b := m.node(segs[:mid], 2*id), m.node(segs[mid:], 2*id+1)
	for len(m.bufs) <= id {
		m.bufs = append(m.bufs, held{})
	}
	out := &m.bufs[id]
	merge2(out, a, b)
	return *out
}

// merge2 sets out to a and b merged, a first at equal times.
func merge2(out *held, a, b held) {
	n := a.len() + b.len()
	out.at, out.ref = grow(out.at, n), grow(out.ref, n)
	end, key := out.end, out.key
	out.end, out.key = nil, nil
	if a.end != nil {
		out.end = grow(end, n)
	}
	if a.key != nil {
		out.key = grow(key, n)
	}
	at, ref := out.at[:n], out.ref[:n]
	aAt, aRef, bAt, bRef := a.at, a.ref[:len(a.at)], b.at, b.ref[:len(b.at)]
	i, j, k := 0, 0, 0
	if out.end == nil && out.key == nil {
		for i < len(aAt) && j < len(bAt) && k < len(at) {
			if x, y := aAt[i], bAt[j]; x <= y {
				at[k], ref[k] = x, aRef[i]
				i++
			} else {
				at[k], ref[k] = y, bRef[j]
				j++
			}
			k++
		}
	} else {
		for i < len(aAt) && j < len(bAt) {
			if aAt[i] <= bAt[j] {
				out.copyFrom(k, a, i)
				i++
			} else {
				out.copyFrom(k, b, j)
				j++
			}
			k++
		}
	}
	for ; i < len(aAt); i, k = i+1, k+1 {
		out.copyFrom(k, a, i)
	}
	for ; j < len(bAt); j, k = j+1, k+1 {
		out.copyFrom(k, b, j)
	}
}

// copyFrom sets entry k to entry i of src.
func (h *held) copyFrom(k int, src held, i int) {
	h.at[k], h.ref[k] = src.at[i], src.ref[i]
	if h.end != nil {
		h.end[k] = src.end[i]
	}
	if h.key != nil {
		h.key[k] = src.key[i]
	}
}
