package strategies

var (
	_ Limiter       = (*Combined)(nil)
	_ Limiter       = (*Sequential)(nil)
	_ Limiter       = (*Gated)(nil)
	_ Limiter       = (*GatedRatesFirst)(nil)
	_ StatsReporter = (*Combined)(nil)
	_ StatsReporter = (*Sequential)(nil)
	_ StatsReporter = (*Gated)(nil)
	_ StatsReporter = (*GatedRatesFirst)(nil)
)
