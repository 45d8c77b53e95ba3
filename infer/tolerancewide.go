package infer

import "sync"

// spreadWideBoth is spreadWide under both drains a spread's sampled
// buckets are judged with, in one walk over the calls: free as with no
// refusal taking from the bucket (drain nil), count as with every one
// taking (drain all refusals). Each refusal's bounds are those spreadWide
// gives, value for value.
func (d *sends) spreadWideBoth(u int, q uint64, sp int64, free, count []int64) {
	var possF, possA u128    // the deficit of the accepted calls, and of all calls, on the logged instants
	pi, pprev := 0, int64(0) // the calls taken into poss, and its instant
	lo, hi := 0, 0           // the calls logged in [s_r-sp, s_r+sp]
	var inF, inA int64       // their cost: the accepted ones', and all of theirs
	for r, k := range d.refIdx {
		i, t := int(k), d.at[k]
		for ; pi < len(d.at) && d.at[pi] < t-sp; pi++ {
			if pi > 0 && d.at[pi] > pprev {
				fill := mul64(q, uint64(d.at[pi]-pprev))
				possF, possA = drained(possF, fill), drained(possA, fill)
			}
			pprev = d.at[pi]
			c := mul64(uint64(d.costOf(u, pi)), day)
			if possA = possA.add(c); !d.refused[pi] {
				possF = possF.add(c)
			}
		}
		for ; hi < len(d.at) && d.at[hi] <= t+sp; hi++ {
			c := d.costOf(u, hi)
			if inA += c; !d.refused[hi] {
				inF += c
			}
		}
		for ; lo < hi && d.at[lo] < t-sp; lo++ {
			c := d.costOf(u, lo)
			if inA -= c; !d.refused[lo] {
				inF -= c
			}
		}
		foundF, foundA := possF, possA
		if pi > 0 {
			fill := mul64(q, uint64(t-sp-pprev))
			foundF, foundA = drained(possF, fill), drained(possA, fill)
		}
		// A refusal takes under count (its own cost is in inA), not under free.
		c := d.costOf(u, i)
		free[r] = foundF.add(mul64(uint64(inF+c), day)).ceilDay() - 1
		count[r] = foundA.add(mul64(uint64(inA), day)).ceilDay() - 1
	}
}

// drained is refill's deficit def less fill, never below full.
func drained(def, fill u128) u128 {
	if def.less(fill) {
		return u128{}
	}
	return def.sub(fill)
}

// spreadWides holds bounds a spread's bucket candidates no longer need:
// a spread's search makes about a hundred candidates a unit, each of a
// bound per refusal, and keeps only those not outdone.
var spreadWides sync.Pool // of *[]int64

// lendWide is room for n bounds, every one to be written.
func lendWide(n int) []int64 {
	if b, ok := spreadWides.Get().(*[]int64); ok && cap(*b) >= n {
		return (*b)[:n]
	}
	return make([]int64, n)
}

// giveWide hands back bounds no one reads any more.
func giveWide(b []int64) { spreadWides.Put(&b) }
