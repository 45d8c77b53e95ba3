package logcheck

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInFlightCap(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		contract, flag        int
		explicit, hasEnd      bool
		want                  int
		notChecked, wantError bool
	}{
		{name: "contract cap, end times", contract: 4, hasEnd: true, want: 4},
		{name: "contract cap, no end times: not checked, no error", contract: 4, notChecked: true},
		{name: "no cap anywhere", hasEnd: false},
		{name: "flag overrides contract", contract: 4, flag: 2, explicit: true, hasEnd: true, want: 2},
		{name: "flag 0 disables the contract's cap", contract: 4, flag: 0, explicit: true},
		{name: "explicit cap without end times is an error", flag: 3, explicit: true, wantError: true},
		{name: "explicit cap over a contract's, without end times", contract: 4, flag: 3, explicit: true, wantError: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, note, err := InFlightCap(tc.contract, tc.flag, tc.explicit, tc.hasEnd)
			if tc.wantError {
				require.ErrorIs(t, err, ErrNeedsEnd)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			if tc.notChecked {
				assert.Contains(t, note, "in-flight cap (at most 4 at once)")
				assert.Contains(t, note, "--end-col")
			} else {
				assert.Empty(t, note)
			}
		})
	}
}
