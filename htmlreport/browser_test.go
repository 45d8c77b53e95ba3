package htmlreport_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "write the README's screenshot to docs/img")

// browser opens generated reports in headless Chromium and collects every
// console error and uncaught exception of the page.
type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
}

var (
	shared    *browser
	sharedErr string
	closeAll  = func() {}
)

func TestMain(m *testing.M) {
	code := m.Run()
	closeAll()
	os.Exit(code)
}

// newBrowser returns the package's Chromium, started by the first test
// that asks, or skips the test when there is none; CI=true or
// RLCHECK_REQUIRE_BROWSER=1 turns the skip into a failure.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	if shared == nil && sharedErr == "" {
		shared, sharedErr = startBrowser()
	}
	if sharedErr != "" {
		if os.Getenv("CI") == "true" || os.Getenv("RLCHECK_REQUIRE_BROWSER") == "1" {
			t.Fatal(sharedErr)
		}
		t.Skip(sharedErr)
	}
	shared.mu.Lock()
	shared.errors = nil
	shared.mu.Unlock()
	return shared
}

func startBrowser() (*browser, string) {
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		return nil, "no chromium on PATH (apt-get install -y chromium): the HTML reports are not tested in a browser"
	}
	profile, err := os.MkdirTemp("", "rlcheck-chromium-")
	if err != nil {
		return nil, err.Error()
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 5*time.Minute)
	closeAll = func() { cancelTimeout(); cancel(); cancelAlloc(); os.RemoveAll(profile) }
	b := &browser{ctx: ctx}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				b.mu.Lock()
				b.errors = append(b.errors, m.String())
				b.mu.Unlock()
			}
		}
	}()
	return b, ""
}

// open loads a report and waits until its script has drawn it.
func (b *browser) open(t *testing.T, path string) {
	t.Helper()
	abs, err := filepath.Abs(path)
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(b.ctx, chromedp.Navigate("file://"+abs)))
	require.NoError(t, chromedp.Do(b.ctx, chromedp.WaitVisible(`body[data-ready="1"]`)), "the report never finished drawing")
}

func (b *browser) eval(t *testing.T, js string, out any) {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[any](js))
	require.NoError(t, err, js)
	raw := fmt.Sprint(v)
	switch o := out.(type) {
	case *string:
		*o = raw
	case *int:
		_, err := fmt.Sscan(raw, o)
		require.NoError(t, err, "%s gave %q", js, raw)
	default:
		t.Fatalf("eval into %T", out)
	}
}

func (b *browser) click(t *testing.T, sel string) {
	t.Helper()
	require.NoError(t, chromedp.Do(b.ctx, chromedp.Click(sel)), sel)
}

// noErrors fails on any console error the page has written so far.
func (b *browser) noErrors(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	assert.Empty(t, b.errors, "console errors")
}

// screenshot saves the page under dir, and with -update also to the
// README's image.
func (b *browser) screenshot(t *testing.T, dir, name string, readme string) {
	t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), png, 0o644))
	if *update && readme != "" {
		// The top of the page, as a reader first sees it.
		require.NoError(t, chromedp.Do(b.ctx, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`)))
		top, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(readme, top, 0o644))
	}
}

// violationsShown reads the violation count the page shows for panel p and
// rule r.
func (b *browser) violationsShown(t *testing.T, p, r int) int {
	var n int
	b.eval(t, fmt.Sprintf(`document.querySelector("#rule-%d-%d .viol").dataset.violations`, p, r), &n)
	return n
}

// recordViolationsShown reads the violations among the limiter's records
// that the page shows for panel p and rule r.
func (b *browser) recordViolationsShown(t *testing.T, p, r int) int {
	var n int
	b.eval(t, fmt.Sprintf(`document.querySelector("#rule-%d-%d .recviol").dataset.violations`, p, r), &n)
	return n
}

// layers counts the series of panel p's chart for rule r.
func (b *browser) layers(t *testing.T, p, r int) int {
	var n int
	b.eval(t, fmt.Sprintf(`window.rlcheckReport.panels[%d].charts[%d].series.length`, p, r), &n)
	return n
}

// zoomFirst clicks the first violation of panel p, rule r, and returns the
// chart's mode and the number of sends listed.
func (b *browser) zoomFirst(t *testing.T, p, r int) (mode string, sends int) {
	b.click(t, fmt.Sprintf(`#viol-%d-%d tbody tr`, p, r))
	// uPlot applies a new scale on its next commit.
	for range 20 {
		if b.eval(t, fmt.Sprintf(`document.querySelector("#rule-%d-%d .chart").dataset.mode`, p, r), &mode); mode == "detail" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.eval(t, fmt.Sprintf(`document.querySelectorAll("#sends-%d-%d li").length`, p, r), &sends)
	return mode, sends
}

func panelNames(t *testing.T, b *browser) []string {
	var s string
	b.eval(t, `Array.from(document.querySelectorAll("section.panel h2")).map(h => h.textContent.split(" — ")[0]).join("|")`, &s)
	return strings.Split(s, "|")
}
