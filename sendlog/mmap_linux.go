package sendlog

import (
	"os"
	"syscall"
)

// mapFile maps f's bytes read-only, for a Reader to cut chunks from without
// copying them: it returns nil when f is no regular file of at least min
// bytes, or the mapping fails, and the caller reads f instead.
func mapFile(f *os.File, min int64) []byte {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() < min || st.Size() != int64(int(st.Size())) {
		return nil
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	return m
}

// dropPages gives back the pages of m, a mapping's range already parsed:
// the file stays in the page cache, but no longer counts in the process's
// resident memory.
func dropPages(m []byte) { syscall.Madvise(m, syscall.MADV_DONTNEED) }

// unmapFile ends a mapping from mapFile.
func unmapFile(m []byte) { syscall.Munmap(m) }
