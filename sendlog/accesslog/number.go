package accesslog

const maxInt64 = 1<<63 - 1

var pow10 = [...]int64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// numeric reports whether b is made of digits and dots only.
func numeric(b []byte) bool {
	for _, c := range b {
		if (c < '0' || c > '9') && c != '.' {
			return false
		}
	}
	return len(b) > 0
}

// parseUint reads a non-negative decimal integer that fits an int64.
func parseUint(b []byte) (int64, bool) {
	if !isDigits(b) {
		return 0, false
	}
	var n int64
	for _, c := range b {
		d := int64(c - '0')
		if n > (maxInt64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// parseDecimal reads seconds written "S" or "S.F" (at most nine fraction
// digits) as exact nanoseconds.
func parseDecimal(b []byte) (int64, bool) {
	whole, frac := b, []byte(nil)
	for i, c := range b {
		if c == '.' {
			whole, frac = b[:i], b[i+1:]
			if len(frac) == 0 || len(frac) > 9 || !isDigits(frac) {
				return 0, false
			}
			break
		}
	}
	sec, ok := parseUint(whole)
	if !ok {
		return 0, false
	}
	var ns int64
	for _, c := range frac {
		ns = ns*10 + int64(c-'0')
	}
	ns *= pow10[9-len(frac)]
	if sec > (maxInt64-ns)/1e9 {
		return 0, false
	}
	return sec*1e9 + ns, true
}
